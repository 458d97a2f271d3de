#!/bin/bash
# args: drv emu tag
out=$(mktemp -d)
cd "$(git rev-parse --show-toplevel)"
P=docs/data/reg-figures/tune-68,200.profile
for round in 1 2; do
for emu in 68,200 off; do
 for s in register cache; do
  echo "== $1 $s emu=$emu round $round"
  SLUICE_STATS=json SLUICE_DRIVERS=$1 SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on SLUICE_TUNE_PROFILE=$P SLUICE_REG_EMULATE=$emu timeout 60 build/bin/sluicerun -n 2 --bind core build/bin/sluice-bench model --sizes 1M,4M,16M --strategies $s > "$out"/$1-$s-$emu-$round.out 2>&1
  grep '^ ' "$out"/$1-$s-$emu-$round.out
  grep -o '"\(rel.retransmits_timeout\|rel.tail_probes\|rel.spurious\|reg.emulated_ns\|reg.strategy.register\|reg.strategy.cache\)":[0-9]*' "$out"/$1-$s-$emu-$round.out | tr '\n' ' '; echo
 done
done
done
