#!/bin/bash
# (ROOT: where the builds are, default /tmp/hosts) ab.sh with the order of CFGS rotated every pair (position effect)
IFS=, read -r A B <<<"${NETNS_HOSTS:-x,y}"
port=$((21000 + RANDOM % 8000))
read -ra C <<<"$CFGS"; k=${#C[@]}
for i in $(seq 1 ${PAIRS:-3}); do
for j in $(seq 0 $((k-1))); do
  cfg=${C[$(( (i + j) % k ))]}
  name=${cfg%%:*}; envs=; [[ $cfg == *:* ]] && envs=${cfg#*:}; envs=${envs//,/ }
  v=${ROOT:-/tmp/hosts}/$name
  port=$((port+1))
  if [ "${LOOP:-0}" = 1 ]; then
    r=$(env SLUICE_DRIVERS=udp $envs $v/sluicerun -n 2 --bind core $v/sluice-bench pingpong --sizes ${SIZE:-1M} $BENCHOPT 2>>${ROOT:-/tmp/hosts}/err.ab)
  else
    r=$(env SLUICE_DRIVERS=udp $envs ip netns exec $A timeout 120 $v/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
      --launch-keeps-env --boot-addr ${NETNS_BOOT_ADDR%:*}:$port --bind core $v/sluice-bench pingpong --sizes ${SIZE:-1M} $BENCHOPT 2>>${ROOT:-/tmp/hosts}/err.ab)
  fi
  echo "$i $cfg $(echo "$r" | awk -v s=${SIZEB:-1048576} '$1==s{print "lat", $3, $4, "bw", $7, $8}')"
done; done
