#!/bin/bash
run() { local V=$1; shift
  env "$@" SLUICE_DRIVERS=tcp timeout 120 $V/sluicerun -n 2 --bind core $V/sluice-bench pingpong --sizes ${SIZE:-1M} $OPTS 2>/dev/null | awk -v s=${SIZEB:-1048576} '$1==s{print $3, $7}'; }
run /tmp/progress/old X=1 >/dev/null
for i in $(seq 1 ${N:-4}); do
  for c in $CFGS; do IFS=: read -r V envs <<<"$c"; echo "$i $c $(run /tmp/progress/$V X=1 ${envs//;/ }) x=0"; done
done
