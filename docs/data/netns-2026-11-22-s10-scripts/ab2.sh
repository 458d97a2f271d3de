#!/bin/bash
# Interleaved A/B of sluice-bench builds between two netns hosts, sluice-bench's own iteration
# counts: VARIANTS="dirA dirB" PAIRS=N SIZE=.. SIZEB=.. [DRIVERS=udp] ab2.sh MTU
here="$(cd "$(dirname "$0")" && pwd)"
export REPO="${REPO:-$(cd "$here/../../.." && pwd)}" ITERS=default
"$REPO/tests/netns/netns.sh" run --hosts 2 --mtu "${1:-1500}" -- "$here/../netns-2026-11-22-tcp8/inside.sh"
