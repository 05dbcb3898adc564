#!/usr/bin/env bash
# The suite failed on the newest versions pyproject allows (.github/workflows/latest.yml): say so to the
# maintainers in one open issue, a comment on it when the workflow already opened one, else a new one,
# with what moved from the lock and the tests that failed. Needs GH_TOKEN and GITHUB_REPOSITORY.
#   latest_issue.sh DRIFT_MD PYTEST_LOG
set -euo pipefail
export GH_REPO=$GITHUB_REPOSITORY
title="The suite fails on the newest versions pyproject allows"
run_url="${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/${GITHUB_RUN_ID:-0}"
body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
  echo "The scheduled run on the newest versions failed: $run_url"
  echo
  echo "What moved from \`.ci/constraints.txt\`:"
  echo
  head -c 20000 "$1" 2> /dev/null || echo "(not measured: the install did not finish)"
  echo
  echo "Failed tests (first 40):"
  echo
  echo '```text'
  grep -E '^(FAILED|ERROR) ' "$2" 2> /dev/null | head -n 40 | cut -c1-300 | tr -d '`' || true
  echo '```'
  echo
  echo "CI and the README's test command keep the locked versions, so main is not blocked. To move the lock:"
  echo "\`python scripts/lock.py\` (and \`python scripts/sweep.py\` for a new transformers)."
} > "$body"
# only an issue this workflow opened (its bot's), never one that someone else titled the same
open=$(gh issue list --state open --limit 100 --json number,title,author \
  | jq -r --arg t "$title" '[.[] | select(.title == $t and .author.login == "github-actions[bot]")] | .[0].number // empty')
if [ -n "$open" ]; then
  gh issue comment "$open" --body-file "$body"
else
  gh issue create --title "$title" --body-file "$body"
fi
