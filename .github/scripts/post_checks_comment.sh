#!/usr/bin/env bash
# From the privileged workflow_run side: post the comment for a pull request's checks run, rendered
# here from the data that run uploaded (render_checks_comment.py says how it is bounded and checked).
# Needs GH_TOKEN, GITHUB_REPOSITORY, and from the workflow_run event: RUN_ID, RUN_URL, HEAD_SHA (the
# commit the checks ran on), HEAD_REPO and HEAD_BRANCH (where that commit was pushed) and RUN_PRS (its
# pull_requests' numbers as JSON; GitHub leaves it empty for a fork's).
# The artifact's pull request must be one of RUN_PRS when GitHub names any, and come from HEAD_REPO's
# HEAD_BRANCH: a fork cannot direct the comment at another pull request (an error). When its head has
# moved past HEAD_SHA, these checks are superseded and say nothing (a notice, not a failure: the newer
# commit's checks will comment).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
max=$((2 * 1024 * 1024))
[[ $RUN_ID =~ ^[0-9]+$ ]] || { echo "::error::RUN_ID is not a number"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

found=$(gh api "repos/$GITHUB_REPOSITORY/actions/runs/$RUN_ID/artifacts?name=hubdiff-checks" \
  --jq '.artifacts[] | select(.name == "hubdiff-checks" and (.expired | not)) | [.id, .size_in_bytes] | @tsv' \
  | head -n 1)
if [ -z "$found" ]; then
  echo "::notice::the checks run uploaded no hubdiff-checks artifact; nothing to post"
  exit 0
fi
read -r id size <<<"$found"
[[ $id =~ ^[0-9]+$ && $size =~ ^[0-9]+$ ]] || { echo "::error::unexpected artifact listing"; exit 1; }
((size <= max)) || { echo "::error::the hubdiff-checks artifact has $size bytes, over $max; not commenting"; exit 1; }
# the listing's size is the uploader's word: the download itself stops one byte past the cap
set +o pipefail
gh api "repos/$GITHUB_REPOSITORY/actions/artifacts/$id/zip" | head -c $((max + 1)) > "$tmp/artifact.zip"
fetched=("${PIPESTATUS[@]}")
set -o pipefail
got=$(wc -c < "$tmp/artifact.zip")
((got <= max)) || { echo "::error::the hubdiff-checks artifact is over $max bytes (its listing said $size); not commenting"; exit 1; }
((fetched[0] == 0)) || { echo "::error::the hubdiff-checks artifact could not be downloaded"; exit 1; }
python3 "$here/render_checks_comment.py" "$tmp/artifact.zip" "$tmp/out" --head-sha "$HEAD_SHA" --run-url "$RUN_URL"
number=$(cat "$tmp/out/pr-number")

if [ -n "$(jq -r '.[]?' <<<"${RUN_PRS:-[]}")" ] && ! jq -e --argjson n "$number" 'any(.[]; . == $n)' <<<"$RUN_PRS" > /dev/null; then
  echo "::error::the artifact names pull request #$number, the checks ran for $(jq -c . <<<"$RUN_PRS"); not commenting"
  exit 1
fi
pr=$(gh api "repos/$GITHUB_REPOSITORY/pulls/$number" --jq '[.head.sha, (.head.repo.full_name // "") + ":" + .head.ref] | @tsv')
IFS=$'\t' read -r head from <<<"$pr"
if [ "$from" != "$HEAD_REPO:$HEAD_BRANCH" ]; then
  echo "::error::the artifact names pull request #$number, from $from; the checks ran on $HEAD_REPO:$HEAD_BRANCH; not commenting"
  exit 1
fi
if [ "$head" != "$HEAD_SHA" ]; then
  echo "::notice::pull request #$number is now at $head, past the commit these checks ran on ($HEAD_SHA); the newer checks will comment"
  exit 0
fi
PR_NUMBER=$number bash "$here/sticky_comment.sh" "$tmp/out/comment.md" "<!-- hubdiff:checks -->"
