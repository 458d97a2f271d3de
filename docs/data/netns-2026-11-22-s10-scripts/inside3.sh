#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
V=/work/main/build/bin
for i in 1 2 3; do
  for cfg in "X=1" "SLUICE_TCP_MAX_PACKET=128K" "SLUICE_TCP_MAX_PACKET=2M" "SLUICE_TCP_SOCKET_BUFFER=4M"; do
    port=$((port+1))
    r=$(env $cfg SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes 1M 2>/dev/null | awk '$1==1048576{print $3, $4, $7, $8}')
    echo "$i $cfg $r"
  done
done
