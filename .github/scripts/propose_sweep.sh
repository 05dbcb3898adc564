#!/usr/bin/env bash
# Propose the sweep of a new transformers release (.github/workflows/sweep.yml) as one pull request from
# branch hubdiff/sweep, by the rules open_prs.sh follows for baselines: the branch's pull requests are
# listed with their states (never `gh pr view BRANCH`, which picks a merged one when none is open); an open
# one that already proposes this version is left alone; one closed unmerged for this version means the
# maintainers said no, and it is not proposed again; a push is a fresh commit on the default branch, with
# --force-with-lease on the sha just read. The version is the body's last line,
# `<!-- hubdiff:sweep transformers==X -->`. Needs GH_TOKEN, GITHUB_REPOSITORY, VERSION (the swept
# transformers) and BODY (a markdown file); the arguments are the files to propose, as the working tree
# holds them (nothing else of the tree, such as logs, goes in).
#   propose_sweep.sh FILE...
set -euo pipefail
export GH_REPO=$GITHUB_REPOSITORY
server=${GITHUB_SERVER_URL:-https://github.com}
url="$server/$GITHUB_REPOSITORY.git"
n=${GIT_CONFIG_COUNT:-0}
export "GIT_CONFIG_KEY_$n=http.$server/.extraheader"
export "GIT_CONFIG_VALUE_$n=AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GH_TOKEN" | base64 -w0)"
export GIT_CONFIG_COUNT=$((n + 1))
export GIT_AUTHOR_NAME=hubdiff GIT_COMMITTER_NAME=hubdiff
export GIT_AUTHOR_EMAIL=hubdiff@users.noreply.github.com GIT_COMMITTER_EMAIL=hubdiff@users.noreply.github.com
[[ $VERSION =~ ^[0-9][0-9A-Za-z.+-]*$ ]] || { echo "::error::not a version: $VERSION"; exit 1; }
branch=hubdiff/sweep
marker="<!-- hubdiff:sweep transformers==$VERSION -->"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ cat "$BODY"; echo; echo "$marker"; } > "$tmp/body.md"
for file in "$@"; do
  [[ $file =~ ^[A-Za-z0-9._][A-Za-z0-9._/-]*$ && ! $file =~ (^|/)\.\.(/|$) && -f $file && ! -L $file ]] \
    || { echo "::error::not a file here: $file"; exit 1; }
done
if git diff --quiet HEAD -- "$@"; then
  echo "transformers $VERSION: nothing changed; no pull request"
  exit 0
fi
prs=$(gh pr list --head "$branch" --state all --limit 100 --json number,state,body,isCrossRepository \
  --jq '[.[] | select(.isCrossRepository | not)]')
with_marker() { jq -r --arg s "$1" --arg m "$marker" \
  '.[] | select(.state == $s) | select(any(.body | split("\n")[]; rtrimstr("\r") == $m)) | .number' <<<"$prs"; }
open=$(jq -r '[.[] | select(.state == "OPEN") | .number] | .[0] // empty' <<<"$prs")
if [ -n "$open" ] && [ -n "$(with_marker OPEN)" ]; then
  echo "#$open already proposes transformers $VERSION"
  exit 0
fi
if [ -z "$open" ] && [ -n "$(with_marker CLOSED | head -n 1)" ]; then
  echo "::notice::a pull request for transformers $VERSION was closed unmerged; not proposing it again"
  exit 0
fi
remote=$(git ls-remote "$url" "refs/heads/$branch" | cut -f1)
base=$(git rev-parse HEAD)
GIT_INDEX_FILE="$tmp/index" git read-tree "$base"
for file in "$@"; do
  GIT_INDEX_FILE="$tmp/index" git update-index --add --cacheinfo "100644,$(git hash-object -w -- "$file"),$file"
done
commit=$(git commit-tree "$(GIT_INDEX_FILE="$tmp/index" git write-tree)" -p "$base" \
  -m "Sweep transformers $VERSION: the proof, the lock and the range")
git push -q --force-with-lease="refs/heads/$branch:$remote" "$url" "$commit:refs/heads/$branch"
if [ -n "$open" ]; then
  gh pr edit "$open" --title "Sweep transformers $VERSION" --body-file "$tmp/body.md" > /dev/null
  echo "updated #$open"
else
  gh pr create --head "$branch" --title "Sweep transformers $VERSION" --body-file "$tmp/body.md"
fi
