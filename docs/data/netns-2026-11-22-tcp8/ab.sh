#!/bin/bash
# Interleaved A/B of sluice-bench pingpong builds between two tests/netns hosts (or on loopback).
#   VARIANTS="dirA dirB" [PAIRS=N] [ITERS=N] [RAW=1] [LOOP=1] [SIZE=8 SIZEB=8] \
#     /work/notes/measure.sh docs/data/netns-2026-11-22-tcp8/ab.sh MTU
# each dir holds a sluicerun and a sluice-bench; prints "pair variant lat_us best_us [bw pp]".
# stat.py FILE... prints medians and the per-pair ratio of the second variant to the first.
here="$(cd "$(dirname "$0")" && pwd)"
export REPO="${REPO:-$(cd "$here/../../.." && pwd)}"
if [ "${LOOP:-0}" = 1 ]; then exec "$here/inside.sh"; fi
"$REPO/tests/netns/netns.sh" run --hosts 2 --mtu "${1:-1500}" -- "$here/inside.sh"
