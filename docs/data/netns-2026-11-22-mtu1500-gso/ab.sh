#!/bin/bash
# ab.sh BUILD MTU SIZES DRIVERS: sluice-bench pingpong between 2 netns hosts (veth+bridge)
# extra SLUICE_* vars are passed through the environment (--launch-keeps-env).
repo=/work/wt-net
build=$1 mtu=$2 sizes=$3 drivers=${4:-tcp udp}
export build sizes drivers
$repo/tests/netns/netns.sh run --mtu "$mtu" -- bash -c '
for d in $drivers; do
  SLUICE_DRIVERS=$d ip netns exec $NETNS_HEAD timeout 120 $build/bin/sluicerun --hosts $NETNS_HOSTS \
    --launch "$NETNS_LAUNCH" --launch-keeps-env --boot-addr $NETNS_BOOT_ADDR --bind core \
    $build/bin/sluice-bench pingpong --sizes $sizes --json --no-progress | sed "s/^/$d /"
done'
