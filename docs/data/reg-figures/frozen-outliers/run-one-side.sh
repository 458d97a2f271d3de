#!/bin/bash
out=$(mktemp -d)
cd "$(git rev-parse --show-toplevel)"
P=docs/data/reg-figures/tune-off.profile
for round in 1 2; do
 for v in none X_RECV_CACHE X_SEND_CACHE "X_RECV_CACHE X_SEND_CACHE"; do
  e=(); for x in $v; do [ $x = none ] || e+=($x=1); done
  echo "== $1 register variant=$v round $round"
  env "${e[@]}" SLUICE_STATS=json SLUICE_DRIVERS=$1 SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on SLUICE_TUNE_PROFILE=$P timeout 60 build/bin/sluicerun -n 2 --bind core build/bin/sluice-bench model --sizes 4M --strategies register --iters 16 > "$out"/v.out 2>&1
  grep '^ ' "$out"/v.out | tail -1
  grep -o '"\(rel.window_full\|reg.strategy.register\|reg.strategy.cache\)":[0-9]*' "$out"/v.out | tr '\n' ' '; echo
 done
done
