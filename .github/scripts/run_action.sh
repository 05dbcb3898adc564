#!/usr/bin/env bash
# The steps of action.yml (hubdiff as a step of another repository's workflow). The inputs arrive as
# environment variables, never as text pasted into this script.
#   run_action.sh          run hubdiff $COMMAND (check or watch) over $BASELINES; outputs status (and
#                          report for check; watch writes its own outputs)
#   run_action.sh verdict  exit 1 when the run is red: check, any exit but 0; watch, exit 2 or 3 or a
#                          pinned repo lost (a change is the pull request's to say, not a red run)
set -euo pipefail

if [ "${1:-run}" = verdict ]; then
  if [ "$COMMAND" = watch ]; then
    if [ "$STATUS" != 0 ] && [ "$STATUS" != 1 ]; then
      echo "::error::hubdiff watch exited with $STATUS (2: usage or baseline error, or a file it could not write; 3: the Hub could not be read)"
      exit 1
    fi
    if [ -n "${LOST:-}" ] && [ "$LOST" != "[]" ]; then
      echo "::error::pinned repos the watch can no longer read (gone, gated or disabled): $LOST"
      exit 1
    fi
  elif [ "$STATUS" != 0 ]; then
    echo "::error::hubdiff check exited with $STATUS (1: changes beyond tolerance or broken claims; 2: usage or baseline error; 3: the Hub could not be read)"
    exit 1
  fi
  exit 0
fi

read -r -a baselines <<< "$BASELINES"  # split on blanks only: a name is never a glob
if [ -n "$CACHE_DIR" ]; then
  export HUBDIFF_CACHE="$CACHE_DIR"
fi
mkdir -p "$OUTPUT_DIR"
status=0
case "$COMMAND" in
  check)
    report="$OUTPUT_DIR/check.md"
    hubdiff check "${baselines[@]}" --output "$report" --summary "$GITHUB_STEP_SUMMARY" || status=$?
    echo "report=$report" >> "$GITHUB_OUTPUT"
    ;;
  watch)
    options=(--output-dir "$OUTPUT_DIR")
    if [ "$UPDATE" = true ]; then
      options+=(--update)
    fi
    if [ -n "$SHARD" ]; then
      options+=(--shard "$SHARD")
    fi
    hubdiff watch "${baselines[@]}" "${options[@]}" || status=$?
    ;;
  *)
    echo "::error::the hubdiff action's command is check or watch"
    status=2
    ;;
esac
echo "status=$status" >> "$GITHUB_OUTPUT"
