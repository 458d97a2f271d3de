#!/bin/bash
# loopback: tcp, udp, shm A/B, interleaved
cd /work/wt-nsperf
for d in ${DLIST:-tcp udp shm,tcp}; do
  VARIANTS="${VARS:-/tmp/nsperf/old /tmp/nsperf/new}" PAIRS=${PAIRS:-16} LOOP=1 DRIVERS=$d ERRDIR=/tmp/nsperf/r docs/data/netns-2026-11-22-tcp8/ab.sh > /tmp/nsperf/r/loop${SUF}-${d%%,*}.txt
done
