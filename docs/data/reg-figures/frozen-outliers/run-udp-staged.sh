#!/bin/bash
cd "$(git rev-parse --show-toplevel)"
for P in docs/data/reg-figures/tune-off.profile; do
for round in 1 2; do
  echo "== udp round $round"
  SLUICE_DRIVERS=udp SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on SLUICE_TUNE_PROFILE=$P timeout 60 build/bin/sluicerun -n 2 --bind core build/bin/sluice-bench model --sizes 64K,128K,256K,4M,16M --strategies cache,pipeline,superpipeline,copy --json | python3 -c "
import sys,json
for l in sys.stdin:
  d=json.loads(l)
  if 'size' in d: print(d['protocol'],d['size'],d['measured_us'],d['predicted_us'],d['error'],d['median_us'])
"
done; done
