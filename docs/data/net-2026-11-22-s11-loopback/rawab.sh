#!/bin/bash
for i in 1 2 3 4 5 6; do
  r=$(build-peers/raw_pingpong tcp --sizes 8 --iters 20000 2>&1 | cat)
  echo "$i raw-tcp $r"
  r=$(SLUICE_DRIVERS=tcp build/bin/sluicerun -n 2 --bind core build/bin/sluice-bench pingpong --sizes 8 --iters 20000 2>&1 | awk '$1==8{print $3, $4}')
  echo "$i sluice-tcp $r"
done
