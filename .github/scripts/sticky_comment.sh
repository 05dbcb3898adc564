#!/usr/bin/env bash
# Post FILE as the pull request's hubdiff comment, or update the one this bot posted before.
# Usage: sticky_comment.sh FILE MARKER. Needs GH_TOKEN, PR_NUMBER and GITHUB_REPOSITORY; BOT_LOGIN is
# the account the token posts as (default github-actions[bot]; an App's is APP-SLUG[bot]).
# A comment is ours when its author is BOT_LOGIN and its first line is exactly MARKER: a person's
# comment that merely starts with the marker is never overwritten. A token that may not comment
# (403: a read-only token) is a warning, not a failed job.
set -euo pipefail
file=$1
marker=$2
bot=${BOT_LOGIN:-github-actions[bot]}
[[ $PR_NUMBER =~ ^[0-9]+$ ]] || { echo "::error::PR_NUMBER is not a number: $PR_NUMBER"; exit 1; }
[ -s "$file" ] || { echo "no report to post"; exit 0; }
[ "$(head -n 1 "$file")" = "$marker" ] || { echo "::error::$file does not start with $marker"; exit 1; }

exec 3>&1  # the job log, also from inside $(...)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
gh_or_warn() {  # run gh; on HTTP 403 say why and end the script without failing the job
  if gh "$@" 2> "$err"; then return 0; fi
  if grep -q "HTTP 403" "$err"; then
    echo "::warning::the token cannot comment on pull request #$PR_NUMBER (HTTP 403); the report is in the job summary and artifacts" >&3
    return 3
  fi
  cat "$err" >&2
  return 1
}

status=0
listing=$(gh_or_warn api "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" --paginate \
  --jq '.[] | [.id, .user.login, (.body | split("\n")[0])] | @tsv') || status=$?
[ "$status" = 3 ] && exit 0
[ "$status" = 0 ] || exit "$status"
existing=$(awk -F '\t' -v bot="$bot" -v marker="$marker" '$2 == bot && $3 == marker { print $1; exit }' <<<"$listing")
if [ -n "$existing" ]; then
  gh_or_warn api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$existing" -F "body=@$file" > /dev/null \
    || { [ $? = 3 ] && exit 0; exit 1; }
  echo "updated comment $existing on #$PR_NUMBER"
else
  gh_or_warn api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$file" > /dev/null \
    || { [ $? = 3 ] && exit 0; exit 1; }
  echo "posted a comment on #$PR_NUMBER"
fi
