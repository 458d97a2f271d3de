#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
V=${V:-/tmp/progress/old}
for i in $(seq 1 ${N:-4}); do
  port=$((port+1))
  r=$(perf record -q -a -g -e cpu-clock -F 4000 -o /tmp/progress/perf.$TAG.$i.data -- env SLUICE_STATS=1 SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes 1M 2>/tmp/progress/stderr.$TAG.$i | awk '$1==1048576{print $3, $4, $7, $8}')
  echo "run $i: $r"
done
