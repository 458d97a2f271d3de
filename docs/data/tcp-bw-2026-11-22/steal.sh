#!/bin/bash
# wrap: print per-cpu steal/idle delta (jiffies) around each run of inside.sh variant runs
export REPO=/work/wt-progress ITERS=default ERRDIR=/tmp/progress
snap() { awk '/^cpu[01] /{printf "%s st=%s id=%s ", $1, $9, $5}' /proc/stat; }
for i in $(seq 1 ${PAIRS:-6}); do
  for v in $VARIANTS; do
    a=$(awk '/^cpu[01] /{print $9, $5}' /proc/stat | tr '\n' ' ')
    r=$(VARIANTS=$v PAIRS=1 $REPO/docs/data/netns-2026-11-22-tcp8/inside.sh | cut -d' ' -f2-)
    b=$(awk '/^cpu[01] /{print $9, $5}' /proc/stat | tr '\n' ' ')
    echo "$i $r | steal/idle cpu0 cpu1 delta: $(python3 -c "a='$a'.split();b='$b'.split();print([int(y)-int(x) for x,y in zip(a,b)])")"
  done
done
