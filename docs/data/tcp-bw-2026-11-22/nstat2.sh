#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
for i in $(seq 1 ${N:-4}); do
 for V in $VARIANTS; do
  port=$((port+1))
  for h in $A $B; do NSTAT_HISTORY=/tmp/progress/nstat.$h ip netns exec $h nstat -n; done
  r=$(SLUICE_STATS=1 SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes ${SIZE:-1M} $OPTS 2>/tmp/progress/st | awk '$1==1048576{print $3, $4, $7, $8}')
  st=$(grep -o 'reads=[0-9]*\|full=[0-9]*\|writes=[0-9]*' /tmp/progress/st | tr '\n' ' ')
  n=""; for h in $A $B; do n="$n $(NSTAT_HISTORY=/tmp/progress/nstat.$h ip netns exec $h nstat 2>/dev/null | grep -E 'TcpRetransSegs|OFOQueue|DSACKRecv ' | awk '{printf "%s=%s ", $1, $2}')"; done
  echo "$i $(basename $V): $r | $st |$n" | sed 's/TcpExtTCP//g'
 done
done
