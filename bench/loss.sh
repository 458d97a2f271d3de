#!/usr/bin/env bash
# 1 MiB ping-pong bandwidth between two network-namespace hosts (MTU 65535, loopback-like)
# under 0, 0.1, 1 and 5 % packet loss injected by nftables at each host's ingress, for
# Sluice's udp and tcp drivers (needs root: tests/netns/netns.sh). One JSON line per run,
# with "loss_pct" added, to bench/results/loss.jsonl.
#
# Usage: bench/loss.sh [--build DIR] [--mtu BYTES] [--losses "0 0.1 1 5"]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
build="$repo/build" mtu=65535 losses="0 0.1 1 5"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --losses) losses=$2; shift 2 ;;
    *) sed -n '2,7p' "$0" >&2; exit 2 ;;
  esac
done
bin="$build/bin"
mkdir -p "$repo/bench/results"
out="$repo/bench/results/loss.jsonl"
: >"$out"
for driver in udp tcp; do
  for loss in $losses; do
    faults=()
    [[ $loss != 0 ]] && faults=(--loss "$loss" --proto "$driver")
    "$repo/tests/netns/netns.sh" run --hosts 2 --mtu "$mtu" "${faults[@]}" -- \
      "$repo/tests/netns/run_job.sh" 1 "$bin/sluicerun" --timeout 300 \
      env SLUICE_DRIVERS="$driver" "$bin/sluice-bench" pingpong --sizes 1M --iters 100 \
      --reps 20 --json --no-progress | grep '"bench"' | sed "s/^{/{\"loss_pct\":$loss,/" |
      tee -a "$out"
  done
done
