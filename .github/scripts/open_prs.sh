#!/usr/bin/env bash
# For each changed family: propose its re-recorded baseline on branch hubdiff/FAMILY, in at most one open
# pull request, with the report as its body. Inputs come as JSON in FAMILIES, BASELINES, PR_BODIES (the
# outputs of `hubdiff watch --update`, or of record_baseline.sh). Runs in a checkout of the default
# branch whose working tree holds the re-recorded baselines. Needs GH_TOKEN and GITHUB_REPOSITORY
# (GITHUB_SERVER_URL defaults to https://github.com).
#
# A family's pull requests are those from this repository's branch hubdiff/FAMILY (a fork's pull request
# from a branch of that name is not one), listed with their states: never `gh pr view BRANCH`, which,
# when none is open, picks the branch's newest merged or closed one (cli/cli, findForBranch in
# pkg/cmd/pr/shared/finder.go), so that every change after the first merge edited the merged one.
#
# "The same Hub commits": the repo@sha pins of the re-recorded baseline that the default branch's lacks,
# written as the body's last line, `<!-- hubdiff:proposes org/a@SHA org/b@SHA -->` (proposal.py). The
# file's bytes cannot say it: re-recording writes the time it ran.
#
# - An open pull request whose branch already pins what the re-recorded baseline pins: nothing is pushed
#   or edited (a re-run with nothing new is silent). Else the branch moves to a fresh commit on the
#   default branch and the body is replaced.
# - No open one, and one closed unmerged proposed the same Hub commits: nothing (the reviewer said no).
#   Newer commits are another proposal, and get a new pull request.
# - Otherwise (the first change, or one after a merge): push the branch and open a new pull request.
# A push happens only when the branch's content is not already the proposal, and always with
# --force-with-lease on the sha just read, so it never overwrites a push it has not seen. Two runs at
# once (shards never share a family; a re-run or a second workflow could): the loser of a push or of
# `gh pr create` (which refuses a second open pull request for the branch) looks again, once or twice,
# and finds the winner's work already done.
#
# POST_CHECKS=true: the token is the workflow's own, whose pull requests start no workflow, so run the
# checks here (hubdiff check on the re-recorded baseline) and post their sticky comment, whenever the
# pull request is opened or its proposal changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export GH_REPO=$GITHUB_REPOSITORY  # gh's base repository, whatever the checkout's remotes say
server=${GITHUB_SERVER_URL:-https://github.com}
url="$server/$GITHUB_REPOSITORY.git"
# The token reaches git as the checkout action passes it, a header scoped to the server, and through
# the environment rather than the command line.
n=${GIT_CONFIG_COUNT:-0}
export "GIT_CONFIG_KEY_$n=http.$server/.extraheader"
export "GIT_CONFIG_VALUE_$n=AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GH_TOKEN" | base64 -w0)"
export GIT_CONFIG_COUNT=$((n + 1))
export GIT_AUTHOR_NAME=hubdiff GIT_COMMITTER_NAME=hubdiff
export GIT_AUTHOR_EMAIL=hubdiff@users.noreply.github.com GIT_COMMITTER_EMAIL=hubdiff@users.noreply.github.com
base=$(git rev-parse HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RETRY=75  # propose's status when another run got there between our look and our write

path_ok() { [[ $1 =~ ^[A-Za-z0-9._][A-Za-z0-9._/-]*$ && ! $1 =~ (^|/)\.\.(/|$) && -f $1 ]]; }

has_line() {  # JSON pull request list on stdin; prints the numbers of those in STATE whose body has LINE
  jq -r --arg state "$1" --arg line "$2" \
    '.[] | select(.state == $state) | select(any(.body | split("\n")[]; rtrimstr("\r") == $line)) | .number'
}

# propose runs where errexit does not reach (its status is looked at), so every step that can fail
# says so itself.
commit_on_base() {  # the default branch's tree with this family's baseline replaced; no checkout
  local blob tree
  blob=$(git hash-object -w -- "$baseline") && rm -f "$tmp/index" \
    && GIT_INDEX_FILE="$tmp/index" git read-tree "$base" \
    && GIT_INDEX_FILE="$tmp/index" git update-index --add --cacheinfo "100644,$blob,$baseline" \
    && tree=$(GIT_INDEX_FILE="$tmp/index" git write-tree) \
    && git commit-tree "$tree" -p "$base" -m "hubdiff: record $family after new revisions or releases on the Hub"
}

post_checks() {  # NUMBER: the checks of the proposed baseline as that pull request's sticky comment
  local status=0
  mkdir -p reports || return 1
  hubdiff check "$baseline" --output "reports/$family.checks.md" --comment "reports/$family.checks.comment.md" \
    --marker checks > /dev/null || status=$?
  echo "hubdiff check $baseline on $branch exited with $status"
  PR_NUMBER=$1 bash "$here/sticky_comment.sh" "reports/$family.checks.comment.md" "<!-- hubdiff:checks -->"
}

propose() {
  local prs open declined remote="" same=false stale commit number out
  prs=$(gh pr list --head "$branch" --state all --limit 100 \
    --json number,state,body,headRefOid,isCrossRepository --jq '[.[] | select(.isCrossRepository | not)]') \
    || return 1
  open=$(jq -r '[.[] | select(.state == "OPEN") | .number] | .[0] // empty' <<<"$prs") || return 1
  if [ -z "$open" ]; then
    declined=$(has_line CLOSED "$marker" <<<"$prs" | head -n 1)
    if [ -n "$declined" ]; then
      echo "::notice::$family: #$declined proposed these Hub commits and was closed unmerged; not proposing them again"
      return 0
    fi
  fi
  out=$(git ls-remote "$url" "refs/heads/$branch") || return 1
  if [ -n "$out" ]; then
    git fetch -q --no-tags --depth=1 "$url" "refs/heads/$branch" && remote=$(git rev-parse FETCH_HEAD) || return 1
    if git cat-file -e "$remote:$baseline" 2> /dev/null; then
      git show "$remote:$baseline" > "$tmp/remote.yaml" && out=$(python3 "$here/proposal.py" pins "$tmp/remote.yaml") \
        || return 1
      [ "$out" = "$proposed" ] && same=true
    fi
  fi
  stale=$(jq -r --arg sha "$remote" '[.[] | select(.state != "OPEN" and .headRefOid == $sha)] | length' <<<"$prs") \
    || return 1
  if [ -n "$open" ] && $same && [ -n "$(has_line OPEN "$marker" <<<"$prs")" ]; then
    echo "$family: #$open already proposes these Hub commits; nothing to push or edit"
    return 0
  fi
  # A branch that already holds the proposal is kept: under an open pull request, or left by a run that
  # pushed and stopped before opening one. One that a merged or closed pull request ended on is not.
  if ! $same || { [ -z "$open" ] && [ "$stale" != 0 ]; }; then
    commit=$(commit_on_base) || return 1
    if ! git push -q --force-with-lease="refs/heads/$branch:$remote" "$url" "$commit:refs/heads/$branch" \
      2> "$tmp/push.err"; then
      cat "$tmp/push.err" >&2
      # the lease lost ("stale info"), or the ref moved while this push held it ("cannot lock ref",
      # git's receive-pack, on GitHub as on a local remote): another run pushed; look again
      if grep -qE "stale info|cannot lock ref" "$tmp/push.err"; then return $RETRY; fi
      return 1
    fi
    echo "$family: pushed $commit to $branch"
  fi
  if [ -n "$open" ]; then
    gh pr edit "$open" --body-file "$tmp/body.md" > /dev/null || return 1
    number=$open
    echo "$family: updated #$number"
  else
    if ! out=$(gh pr create --head "$branch" --title "hubdiff: $family changed on the Hub" \
      --body-file "$tmp/body.md" 2> "$tmp/create.err"); then
      cat "$tmp/create.err" >&2
      if grep -q "already exists" "$tmp/create.err"; then return $RETRY; fi
      return 1
    fi
    number=${out##*/}
    [[ $number =~ ^[0-9]+$ ]] || { echo "gh pr create printed no pull request URL: $out" >&2; return 1; }
    echo "$family: opened #$number"
  fi
  if [ "${POST_CHECKS:-false}" = true ]; then post_checks "$number" || return 1; fi
}

failed=0
for family in $(jq -r '.[]' <<<"$FAMILIES"); do
  [[ $family =~ ^[A-Za-z0-9._-]+$ ]] || { echo "::error::not a family name: $family"; exit 1; }
  baseline=$(jq -r --arg f "$family" '.[$f]' <<<"$BASELINES")
  body=$(jq -r --arg f "$family" '.[$f]' <<<"$PR_BODIES")
  path_ok "$baseline" && path_ok "$body" || { echo "::error::$family: not a file here: $baseline, $body"; exit 1; }
  branch="hubdiff/$family"
  git show "$base:$baseline" > "$tmp/base.yaml" 2> /dev/null || : > "$tmp/base.yaml"
  proposed=$(python3 "$here/proposal.py" prepare "$tmp/base.yaml" "$baseline" "$body" "$tmp/body.md")
  marker=$(tail -n 1 "$tmp/body.md")
  status=$RETRY
  for _attempt in 1 2 3; do
    status=0
    propose || status=$?
    [ "$status" = "$RETRY" ] || break
    echo "$family: another run changed the branch or its pull request meanwhile; looking again"
  done
  if [ "$status" != 0 ]; then
    echo "::error::$family: could not push or open its pull request (see above)"
    failed=1
  fi
done
exit "$failed"
