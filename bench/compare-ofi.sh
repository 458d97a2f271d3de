#!/usr/bin/env bash
# Interleaved comparison of the ofi driver with raw libfabric and with Sluice's native
# drivers, on loopback, in one session: R rounds, each running every stack once, then the
# table of medians [min-max] over rounds (bench/compare-table.py) with the driver's overhead
# over raw libfabric on the same provider and endpoint type (the targets: at most 0.3 µs
# at 8 B, at most 10 % at 1 MiB). Two ranks, one per core.
#
#   bench/compare-ofi.sh [ROUNDS] [SIZES]        (defaults: 3 rounds, 8,64K,1M)
#   OUT=dir bench/compare-ofi.sh ...             append to an earlier run's results
#   TABLE_ONLY=1 OUT=dir bench/compare-ofi.sh    just print the table of dir
#
# Figures: avg = mean half round trip, what fi_pingpong reports (usec/xfer: its total time
# over the iterations), so the overhead over raw libfabric is taken on means; lat = median
# half round trip (sluice-bench only: fi_pingpong gives no median). On a loaded machine a
# mean carries every preemption: read the overhead columns only from a quiet run.
# Stacks:
#   ofi-rxm    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER="tcp;ofi_rxm" (rdm)   sluicerun -n 2
#   ofi-msg    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=tcp (msg)              --bind core
#   ofi-udp    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=udp (dgram + rel)      sluice-bench
#   ofi-shm    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=shm (rdm)              pingpong
#   sluice-tcp, sluice-udp, sluice-shm   the native drivers, same command
#   fi-rxm, fi-msg, fi-udp, fi-shm   fi_pingpong -p PROVIDER -e rdm|msg|dgram -S SIZE (server
#              on core 0, client on core 1; usec/xfer as avg). Debian's libfabric-bin has
#              fi_pingpong only (fabtests' fi_rdm_tagged_pingpong is not packaged); udp's
#              datagrams hold 1472 bytes, so fi-udp and its row stop at 8 B.
# Results: bench/results/ofi-<timestamp>/<stack>.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-3}"
sizes="${2:-8,64K,1M}"
build="${BUILD:-$repo/build}"
out="${OUT:-$repo/bench/results/ofi-$(date -u +%Y%m%dT%H%M%S)}"
stacks=fi-rxm,fi-msg,fi-udp,fi-shm,ofi-rxm,ofi-msg,ofi-udp,ofi-shm,sluice-tcp,sluice-udp,sluice-shm
mkdir -p "$out"

table() {
  "$here/compare-table.py" "$out" --stacks "$stacks" --peers fi-rxm,fi-msg,fi-udp,fi-shm \
    --subjects none --figures avg_us,lat_us \
    --over ofi-rxm/fi-rxm --over ofi-msg/fi-msg --over ofi-udp/fi-udp --over ofi-shm/fi-shm \
    --over ofi-rxm/sluice-tcp --over ofi-msg/sluice-tcp --over ofi-udp/sluice-udp \
    --over ofi-shm/sluice-shm | tee "$out/table.md"
  echo "results in $out" >&2
}
if [ -n "${TABLE_ONLY:-}" ]; then table; exit 0; fi

command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing: apt-get install libfabric-bin" >&2; exit 1; }
[ -x "$build/bin/sluice-bench" ] || { echo "build Sluice first (make)" >&2; exit 1; }

on_server() { taskset -c 0 "$@"; }
on_client() { taskset -c 1 "$@"; }
# shellcheck disable=SC2034  # read by net-peers.sh
server_ip=127.0.0.1
# shellcheck source=SCRIPTDIR/net-peers.sh
source "$here/net-peers.sh"

# fi_row STACK PROVIDER EP BYTES: one JSON line of fi_pingpong at BYTES.
fi_row() {
  local lat="" pp=""
  set_iters "$4"
  # shellcheck disable=SC2154  # li: set by set_iters (net-peers.sh)
  read -r lat pp < <(ofi_run "$2" "$3" "$4" $((li > 2000 ? 2000 : li))) || true
  echo "{\"bench\":\"pingpong\",\"impl\":\"$1\",\"size\":$4,\"avg_us\":${lat:-null},\"lat_us\":null,\"ofi_MBps\":${pp:-null}}" \
    >>"$out/$1.jsonl"
}

sluice_row() {  # STACK SIZES ENV...: sluice-bench pingpong under sluicerun
  local stack=$1 sz=$2
  shift 2
  env "$@" "$build/bin/sluicerun" -n 2 --bind core "$build/bin/sluice-bench" pingpong \
    --sizes "$sz" --json --no-progress >>"$out/$stack.jsonl" || echo "$stack failed" >&2
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    fi_row fi-rxm "tcp;ofi_rxm" rdm "$b"
    fi_row fi-msg tcp msg "$b"
    if [ "$b" -le 1024 ]; then fi_row fi-udp udp dgram "$b"; fi
    fi_row fi-shm shm rdm "$b"
  done
  sluice_row ofi-rxm "$sizes" SLUICE_DRIVERS=ofi "SLUICE_OFI_PROVIDER=tcp;ofi_rxm"
  sluice_row ofi-msg "$sizes" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=tcp
  sluice_row ofi-udp "$sizes" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=udp SLUICE_OFI_ENDPOINT=dgram
  sluice_row ofi-shm "$sizes" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=shm
  sluice_row sluice-tcp "$sizes" SLUICE_DRIVERS=tcp
  sluice_row sluice-udp "$sizes" SLUICE_DRIVERS=udp
  sluice_row sluice-shm "$sizes" SLUICE_DRIVERS=shm
done
table
