#!/usr/bin/env bash
# For each changed family: commit its re-recorded baseline on branch hubdiff/FAMILY and open or update
# the pull request with the report as its body. Inputs come as JSON in FAMILIES, BASELINES, PR_BODIES.
# Needs GH_TOKEN and GITHUB_REPOSITORY (GITHUB_SERVER_URL defaults to github.com).
# POST_CHECKS=true: the token is the workflow's own, whose pull requests start no workflow, so run
# the checks here (hubdiff check on the branch's baseline) and post their sticky comment ourselves.
set -euo pipefail
git config user.name "hubdiff"
git config user.email "hubdiff@users.noreply.github.com"
server=${GITHUB_SERVER_URL:-https://github.com}
remote="https://x-access-token:${GH_TOKEN}@${server#https://}/${GITHUB_REPOSITORY}.git"
base=$(git rev-parse HEAD)
for family in $(jq -r '.[]' <<<"$FAMILIES"); do
  [[ $family =~ ^[A-Za-z0-9._-]+$ ]] || { echo "::error::not a family name: $family"; exit 1; }
  baseline=$(jq -r --arg f "$family" '.[$f]' <<<"$BASELINES")
  body=$(jq -r --arg f "$family" '.[$f]' <<<"$PR_BODIES")
  branch="hubdiff/$family"
  git checkout -q -B "$branch" "$base"
  git add -- "$baseline"
  git commit -q -m "hubdiff: record $family after new revisions or releases on the Hub" -- "$baseline"
  git push -q --force "$remote" "HEAD:refs/heads/$branch"
  if gh pr view "$branch" --json number > /dev/null 2>&1; then
    gh pr edit "$branch" --body-file "$body"
  else
    gh pr create --head "$branch" --title "hubdiff: $family changed on the Hub" --body-file "$body"
  fi
  if [ "${POST_CHECKS:-false}" = true ]; then
    mkdir -p reports
    status=0
    hubdiff check "$baseline" --output "reports/$family.checks.md" --comment "reports/$family.checks.comment.md" \
      --marker checks > /dev/null || status=$?
    echo "hubdiff check $baseline on $branch exited with $status"
    number=$(gh pr view "$branch" --json number --jq .number)
    PR_NUMBER=$number bash "$(dirname "$0")/sticky_comment.sh" "reports/$family.checks.comment.md" "<!-- hubdiff:checks -->"
  fi
  if git cat-file -e "$base:$baseline" 2> /dev/null; then  # back to base, so the next family's branch lacks it
    git checkout -q "$base" -- "$baseline"
  fi
  git checkout -q --detach "$base"
done
