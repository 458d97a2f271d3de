#!/bin/bash
# inside netns.sh run: window experiment, 1M bw
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
for i in 1 2; do
for cfg in "base 0" "w1024 256" "w1024 512" "w1024 1024"; do
  set -- $cfg; v=/tmp/net-h/$1
  port=$((port+1))
  r=$(env SLUICE_DRIVERS=udp SLUICE_REL_WINDOW=$2 SLUICE_STATS=1 ip netns exec $A timeout 120 $v/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
    --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $v/sluice-bench pingpong --sizes 1M --iters 20 2>/tmp/net-h/err.$1.$2)
  st=$(grep -o "window_full=[0-9]*\|rtx_[a-z]*=[0-9]*\|beyond_window=[0-9]*\|acks_standalone=[0-9]*" /tmp/net-h/err.$1.$2 | tr '\n' ' ')
  echo "$i $cfg $(echo "$r" | awk '$1==1048576{print $7, $8}') $st"
done; done
