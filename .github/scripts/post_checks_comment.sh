#!/usr/bin/env bash
# From the privileged workflow_run side: post the comment that the unprivileged checks run rendered.
# Usage: post_checks_comment.sh DIR (the downloaded artifact: comment.md and pr-number).
# Needs GH_TOKEN, GITHUB_REPOSITORY and HEAD_SHA (the commit the checks ran on). The artifact comes
# from a fork's code, so nothing in it is run or trusted: the pull request number must be a number
# and that pull request's head must be the commit the checks ran on, so a fork cannot direct the
# comment at another pull request.
set -euo pipefail
dir=$1
number=$(head -c 20 "$dir/pr-number" | tr -d '[:space:]')
[[ $number =~ ^[0-9]+$ ]] || { echo "::error::pr-number in the artifact is not a number"; exit 1; }
head=$(gh api "repos/$GITHUB_REPOSITORY/pulls/$number" --jq .head.sha)
if [ "$head" != "$HEAD_SHA" ]; then
  echo "::error::pull request #$number is at $head, the checks ran on $HEAD_SHA; not commenting"
  exit 1
fi
PR_NUMBER=$number bash "$(dirname "$0")/sticky_comment.sh" "$dir/comment.md" "<!-- hubdiff:checks -->"
