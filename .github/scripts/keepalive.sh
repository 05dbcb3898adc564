#!/usr/bin/env bash
# Keep the watch's schedule armed. GitHub disables a public repository's scheduled workflows once the
# repository has had no activity for 60 days ("Disabling and enabling a workflow", GitHub Docs), and a
# quiet watch (nothing changed on the Hub, so nothing merged) would stop without a word. Enabling the
# workflow through the REST API (PUT .../actions/workflows/FILE/enable) restarts that count, which is
# what gautamkrishnar/keepalive-workflow does since its v2 instead of dummy commits; its 45 days
# (reduced from 50 in 2.0.3) come before the warning e-mail GitHub sends ahead of disabling.
# Runs in a checkout of the default branch (the scheduled run's HEAD). Needs GH_TOKEN (actions: write)
# and GITHUB_REPOSITORY; KEEPALIVE_DAYS (default 45) and KEEPALIVE_WORKFLOW (default watch.yml).
set -euo pipefail
days=${KEEPALIVE_DAYS:-45}
workflow=${KEEPALIVE_WORKFLOW:-watch.yml}
[[ $days =~ ^[0-9]+$ && $workflow =~ ^[A-Za-z0-9._-]+$ ]] || { echo "::error::KEEPALIVE_DAYS or KEEPALIVE_WORKFLOW"; exit 2; }
age=$((($(date +%s) - $(git log -1 --format=%ct HEAD)) / 86400))
if [ "$age" -lt "$days" ]; then
  echo "the default branch's last commit is $age days old; the schedule needs no keep-alive yet"
  exit 0
fi
gh api --method PUT "repos/$GITHUB_REPOSITORY/actions/workflows/$workflow/enable"
echo "::notice::the default branch's last commit is $age days old: re-enabled $workflow so that GitHub's 60-day rule does not stop its schedule"
