#!/usr/bin/env bash
# Post FILE as the pull request's hubdiff comment, or update the comment that carries MARKER.
# Needs GH_TOKEN, PR_NUMBER and GITHUB_REPOSITORY in the environment.
set -euo pipefail
file=$1
marker=$2
[ -s "$file" ] || { echo "no report to post"; exit 0; }
existing=$(gh api "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" --paginate \
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
if [ -n "$existing" ]; then
  gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$existing" -F "body=@$file" > /dev/null
else
  gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$file" > /dev/null
fi
