#!/usr/bin/env bash
# Post FILE as the pull request's hubdiff comment, or update the one this bot posted before.
# Usage: sticky_comment.sh FILE MARKER. Needs GH_TOKEN, PR_NUMBER and GITHUB_REPOSITORY; BOT_LOGIN is
# the account the token posts as (default github-actions[bot]; an App's is APP-SLUG[bot]).
# A comment is ours when its author is BOT_LOGIN and its first line is exactly MARKER: a person's
# comment that merely starts with the marker is never overwritten. The comment already saying FILE is
# left alone (a re-run edits nothing). There is one: should two runs post at once, each looks again
# after posting and the later comments are deleted, so the first stays. A token that may not comment
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
gh_or_warn() {  # run gh; on HTTP 403 say why and return 3, so that the script ends without failing the job
  if gh "$@" 2> "$err"; then return 0; fi
  if grep -q "HTTP 403" "$err"; then
    echo "::warning::the token cannot comment on pull request #$PR_NUMBER (HTTP 403); the report is in the job summary and artifacts" >&3
    return 3
  fi
  if grep -q "HTTP 404" "$err" && [ "$1 $2 $3" = "api --method DELETE" ]; then return 0; fi  # the other run's
  cat "$err" >&2
  return 1
}
end() { if [ "$1" = 3 ]; then exit 0; fi; exit "$1"; }  # 3: the 403 warning was given
run() { gh_or_warn "$@" || end $?; }

ours() {  # id<TAB>base64 body of each of the bot's comments with the marker, oldest first
  local listing
  listing=$(gh_or_warn api "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" --paginate \
    --jq '.[] | [.id, .user.login, (.body | split("\n")[0] | rtrimstr("\r")), (.body | @base64)] | @tsv') || return $?
  awk -F '\t' -v bot="$bot" -v marker="$marker" '$2 == bot && $3 == marker { print $1 "\t" $4 }' <<<"$listing" \
    | sort -n
}
drop_duplicates() {  # every one of ours but the first
  local id
  for id in $(tail -n +2 <<<"$1" | cut -f1); do
    run api --method DELETE "repos/$GITHUB_REPOSITORY/issues/comments/$id" > /dev/null
    echo "deleted duplicate comment $id on #$PR_NUMBER"
  done
}

found=$(ours) || end $?
if [ -n "$found" ]; then
  IFS=$'\t' read -r id said < <(head -n 1 <<<"$found")
  if [ "$(base64 -d <<<"$said")" = "$(cat "$file")" ]; then
    echo "comment $id on #$PR_NUMBER already says this"
  else
    run api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$file" > /dev/null
    echo "updated comment $id on #$PR_NUMBER"
  fi
else
  run api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$file" > /dev/null
  echo "posted a comment on #$PR_NUMBER"
  found=$(ours) || end $?
fi
drop_duplicates "$found"
