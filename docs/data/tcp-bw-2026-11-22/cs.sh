#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
for i in $(seq 1 ${N:-6}); do
 for V in $VARIANTS; do
  port=$((port+1))
  r=$(perf stat -a -A -x, -e context-switches,cpu-clock -o /tmp/progress/cs.out -- env SLUICE_STATS=1 SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes 1M 2>/tmp/progress/st | awk '$1==1048576{print $3, $7}')
  st=$(grep -o 'full=[0-9]*\|reads=[0-9]*' /tmp/progress/st | tr '\n' ' ')
  echo "$i $(basename $V) $r | $st | $(grep -v '^#' /tmp/progress/cs.out | grep . | awk -F, '{printf "%s:%s=%s ", $1, $4, $2}')"
 done
done
