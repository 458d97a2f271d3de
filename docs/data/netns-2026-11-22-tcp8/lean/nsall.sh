#!/bin/bash
cd /work/wt-nsperf
for d in tcp udp; do
  VARIANTS="${VARS:-/tmp/nsperf/old /tmp/nsperf/new}" PAIRS=${PAIRS:-12} DRIVERS=$d ERRDIR=/tmp/nsperf/r docs/data/netns-2026-11-22-tcp8/ab.sh 1500 > /tmp/nsperf/r/ns-${d}${SUF}.txt
done
