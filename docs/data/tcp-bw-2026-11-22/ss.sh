#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
for i in $(seq 1 ${N:-4}); do
 for V in $VARIANTS; do
  port=$((port+1))
  ( sleep 0.45; for k in 1 2 3; do ip netns exec $B ss -tmi state established 2>/dev/null | grep -E 'skmem|rcv_space|wscale' | tr -s ' ' | cut -c1-400 | grep -v '^$' | sed "s/^/  $k B: /"; ip netns exec $A ss -tmi state established 2>/dev/null | grep -E 'skmem' | cut -c1-300 | sed "s/^/  $k A: /"; sleep 0.1; done ) > /tmp/progress/ss.$i 2>&1 &
  r=$(SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes 1M 2>/dev/null | awk '$1==1048576{print $3, $4, $7, $8}')
  wait
  echo "run $i $(basename $V): $r"; cat /tmp/progress/ss.$i
 done
done
