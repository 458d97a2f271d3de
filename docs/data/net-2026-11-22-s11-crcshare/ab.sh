#!/bin/bash
# inside netns.sh run (or LOOP=1 outside): CFGS="name:ENV=..,.. name2" PAIRS=N SIZE=1M SIZEB=1048576
IFS=, read -r A B <<<"${NETNS_HOSTS:-x,y}"
port=$((21000 + RANDOM % 8000))
for i in $(seq 1 ${PAIRS:-3}); do
for cfg in $CFGS; do
  name=${cfg%%:*}; envs=; [[ $cfg == *:* ]] && envs=${cfg#*:}; envs=${envs//,/ }
  v=/tmp/lead/$name
  port=$((port+1))
  if [ "${LOOP:-0}" = 1 ]; then
    r=$(env SLUICE_DRIVERS=udp $envs $v/sluicerun -n 2 --bind core $v/sluice-bench pingpong --sizes ${SIZE:-1M} $BENCHOPT 2>>/tmp/lead/err.ab)
  else
    r=$(env SLUICE_DRIVERS=udp $envs ip netns exec $A timeout 120 $v/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
      --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $v/sluice-bench pingpong --sizes ${SIZE:-1M} $BENCHOPT 2>>/tmp/lead/err.ab)
  fi
  echo "$i $cfg $(echo "$r" | awk -v s=${SIZEB:-1048576} '$1==s{print "lat", $3, $4, "bw", $7, $8}')"
done; done
