#!/usr/bin/env bash
# For each changed family: commit its re-recorded baseline on branch hubdiff/FAMILY and open or update
# the pull request with the report as its body. Inputs come as JSON in FAMILIES, BASELINES, PR_BODIES.
set -euo pipefail
git config user.name "hubdiff"
git config user.email "hubdiff@users.noreply.github.com"
remote="https://x-access-token:${GH_TOKEN}@github.com/${GITHUB_REPOSITORY}.git"
base=$(git rev-parse HEAD)
for family in $(jq -r '.[]' <<<"$FAMILIES"); do
  baseline=$(jq -r --arg f "$family" '.[$f]' <<<"$BASELINES")
  body=$(jq -r --arg f "$family" '.[$f]' <<<"$PR_BODIES")
  branch="hubdiff/$family"
  git checkout -q -B "$branch" "$base"
  git add -- "$baseline"
  git commit -q -m "hubdiff: re-record $family after new revisions on the Hub" -- "$baseline"
  git push -q --force "$remote" "HEAD:refs/heads/$branch"
  git checkout -q "$base" -- "$baseline"
  if gh pr view "$branch" --json number > /dev/null 2>&1; then
    gh pr edit "$branch" --body-file "$body"
  else
    gh pr create --head "$branch" --title "hubdiff: new revisions in $family" --body-file "$body"
  fi
done
