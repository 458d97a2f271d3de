#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
run() { local V=$1; shift; port=$((port+1))
  for h in $A $B; do NSTAT_HISTORY=/tmp/progress/nstat.$h ip netns exec $h nstat -n; done
  r=$(env "$@" SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes ${SIZE:-1M} $OPTS 2>/dev/null | awk -v s=${SIZEB:-1048576} '$1==s{print $3, $7}')
  n=0; for h in $A $B; do n=$((n + $(NSTAT_HISTORY=/tmp/progress/nstat.$h ip netns exec $h nstat 2>/dev/null | awk '$1=="TcpRetransSegs"{s+=$2} $1=="TcpExtTCPOFOQueue"{s+=$2} END{print s+0}'))); done
  echo "$r ofo+rtx=$n"; }
run /tmp/progress/old X=1 >/dev/null; run /tmp/progress/old X=1 >/dev/null
for i in $(seq 1 ${N:-4}); do
  for c in $CFGS; do
    IFS=: read -r V envs <<<"$c"
    echo "$i $c $(run /tmp/progress/$V X=1 ${envs//;/ })"
  done
done
