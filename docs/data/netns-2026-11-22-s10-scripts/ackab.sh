#!/bin/bash
# c97848e (vB) vs 0ad21b7 (vC): udp 1 MiB, loopback and netns MTU 1500, 3 pairs each
here="$(cd "$(dirname "$0")" && pwd)"
export DRIVERS=udp SIZE=1M SIZEB=1048576 PAIRS=3 VARIANTS="/tmp/lead/vB /tmp/lead/vC" ERRDIR=/tmp/lead
echo "== netns 1500"; "$here/ab2.sh" 1500
echo "== loopback"; LOOP=1 ITERS=default REPO="$(cd "$here/../../.." && pwd)" "$here/../netns-2026-11-22-tcp8/inside.sh"
