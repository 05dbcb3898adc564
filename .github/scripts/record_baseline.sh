#!/usr/bin/env bash
# Record a first baseline from the workflow (a fresh fork has none that means anything on the Hub):
# hubdiff baseline init RECORD --family FAMILY, a pull request body, and the outputs open_prs.sh reads.
# Needs RECORD (owner/name[@revision]) and FAMILY; writes $GITHUB_OUTPUT.
set -euo pipefail
[[ $RECORD =~ ^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9._/-]+)?$ ]] \
  || { echo "::error::record: not owner/name[@revision]: $RECORD"; exit 2; }
[[ $FAMILY =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || { echo "::error::family: not a file name: $FAMILY"; exit 2; }
mkdir -p reports
recorded=$(hubdiff baseline init "$RECORD" --family "$FAMILY")
echo "$recorded"
baseline="baselines/$FAMILY.yaml"
body="reports/$FAMILY.pr.md"
{
  echo "First baseline of \`$FAMILY\`, recorded by the watch workflow:"
  echo
  echo "    $recorded"
  echo
  echo "Review the recorded config and figures, add claims, and merge to start watching it."
} > "$body"
{
  echo "families=$(jq -cn --arg f "$FAMILY" '[$f]')"
  echo "baselines=$(jq -cn --arg f "$FAMILY" --arg b "$baseline" '{($f): $b}')"
  echo "pr_bodies=$(jq -cn --arg f "$FAMILY" --arg b "$body" '{($f): $b}')"
} >> "$GITHUB_OUTPUT"
