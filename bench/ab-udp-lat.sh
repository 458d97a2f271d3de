#!/usr/bin/env bash
# A/B of sluice-bench binaries on the udp 8 B ping-pong, interleaved.
#
#   bench/ab-udp-lat.sh PAIRS BIN...            loopback: sluicerun -n 2 --bind core
#   bench/ab-udp-lat.sh --netns PAIRS BIN...    one rank in each of two tests/netns hosts
#                                               (root; MTU=1500|65535 picks the links' MTU)
#
# Each of PAIRS rounds runs every BIN once (SLUICE_DRIVERS=udp sluice-bench pingpong --sizes 8
# --iters ITERS, default 30000), then build-peers/raw_pingpong udp (the kernel's floor, pinned
# like the ranks). Prints one line per run: name median_us best_us. SLUICERUN (default
# build/bin/sluicerun) launches every BIN. Run it under /work/notes/measure.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
sluicerun="${SLUICERUN:-$repo/build/bin/sluicerun}"
iters="${ITERS:-30000}"
size="${SIZE:-8}"  # e.g. SIZE=1M ITERS=300: one size; the bandwidth column is then printed too
raw="$repo/build-peers/raw_pingpong"

if [ "${1:-}" = --netns ]; then
  shift
  exec "$repo/tests/netns/netns.sh" run --hosts 2 --mtu "${MTU:-1500}" -- "$0" --inside "$@"
fi
inside=0
if [ "${1:-}" = --inside ]; then
  inside=1
  shift
fi
pairs="$1"
shift
port=$((20000 + RANDOM % 20000))

one() {  # BIN: one Sluice run, prints "name median best"
  local out
  if [ "$inside" = 1 ]; then
    IFS=, read -r A B <<<"$NETNS_HOSTS"
    port=$((port + 1))
    out=$(SLUICE_DRIVERS=udp ip netns exec "$A" timeout 120 "$sluicerun" --hosts "$A,$B" \
      --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr "10.77.1.1:$port" \
      --bind core "$1" pingpong --sizes "$size" --iters "$iters" --no-progress)
  else
    out=$(SLUICE_DRIVERS=udp timeout 120 "$sluicerun" -n 2 --bind core "$1" pingpong --sizes "$size" \
      --iters "$iters" --no-progress)
  fi
  if [ "$size" = 8 ]; then
    awk -v n="$(basename "$1")" '$1 == 8 { print n, $3, $4 }' <<<"$out"
  else  # the one size's row: latency median, best, windowed bandwidth median (MB/s)
    awk -v n="$(basename "$1")" '$1 ~ /^[0-9]/ { print n, $3, $4, $7 }' <<<"$out"
  fi
}

floor() {  # raw_pingpong udp, "raw median best"
  local out
  if [ "$inside" = 1 ]; then
    IFS=, read -r A B <<<"$NETNS_HOSTS"
    port=$((port + 1))
    ip netns exec "$A" taskset -c 0 timeout 120 "$raw" udp --listen "10.77.1.1:$port" --sizes 8 \
      --iters "$iters" >/dev/null &
    out=$(ip netns exec "$B" taskset -c 1 timeout 120 "$raw" udp --connect "10.77.1.1:$port" \
      --sizes 8 --iters "$iters")
    wait
  else
    out=$("$raw" udp --sizes 8 --iters "$iters")
  fi
  sed -E 's/.*median ([0-9.]+) us, best ([0-9.]+) us/raw \1 \2/' <<<"$out"
}

for ((r = 1; r <= pairs; r++)); do
  for bin in "$@"; do one "$bin"; done
  if [ "$size" = 8 ]; then floor; fi
done
