#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
for i in 1 2 3 4 5 6; do
  v=/tmp/net-h/${V:-clk}; port=$((port+1))
  r=$(env SLUICE_DRIVERS=udp SLUICE_STATS=1 $EXTRA ip netns exec $A timeout 120 $v/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
    --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $v/sluice-bench pingpong --sizes 1M --iters 4 2>/tmp/net-h/err.st)
  echo "$i $(echo "$r" | awk '$1==1048576{print $7, $8}')"
  grep -o "rank [01]\|window_full=[0-9]*\|rtx_[a-z]*=[0-9]*\|tail_probes=[0-9]*\|acks_standalone=[0-9]*\|acks_piggybacked=[0-9]*\|drained=[0-9]*\|batches=[0-9]*\|gro_reads=[0-9]*\|srtt_us=[0-9.]*\|kernel_drops=[0-9]*\|spurious=[0-9]*" /tmp/net-h/err.st | tr '\n' ' '; echo
done
