#!/bin/bash
out=$(mktemp -d)
cd "$(git rev-parse --show-toplevel)"
P=docs/data/reg-figures/tune-68,200.profile
for round in 1 2; do
 for s in register cache; do
  echo "== $1 $s round $round"
  SLUICE_STATS=json SLUICE_DRIVERS=$1 SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on SLUICE_TUNE_PROFILE=$P timeout 60 build/bin/sluicerun -n 2 --bind core build/bin/sluice-bench model --sizes 4M --strategies $s --iters 16 > "$out"/b-$1-$s-$round.out 2>&1
  grep '^ ' "$out"/b-$1-$s-$round.out
  grep -o '"\(rel.retransmits_timeout\|rel.tail_probes\|rel.spurious\|rel.duplicates\|rel.window_full\|udp.kernel_drops\|rel.packets_sent\|rel.retransmits_fast\|rel.drained\|rel.srtt_mean\|rel.nacks\)":[0-9]*' "$out"/b-$1-$s-$round.out | tr '\n' ' '; echo
 done
done
