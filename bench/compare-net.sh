#!/usr/bin/env bash
# Interleaved network comparison on loopback: Sluice's tcp and udp drivers against
# Open MPI's tcp BTL, MPICH over UCX tcp, UCX itself (ucx_perftest) and libfabric's
# udp;ofi_rxd (fi_pingpong), in one session: R rounds, each running every stack once, then
# the table of medians [min-max] over rounds with the ratios the issue's targets name
# (bench/compare-table.py). Two ranks, one per core.
#
#   bench/compare-net.sh [ROUNDS] [SIZES]        (defaults: 3 rounds, 8,1M)
#   OUT=dir bench/compare-net.sh ...             append to an earlier run's results (several
#                                                short calls, e.g. through measure.sh)
#   TABLE_ONLY=1 OUT=dir bench/compare-net.sh    just print the table of dir
#
# Commands per stack (lat = median half round trip, bw = windowed bandwidth, 64 in flight):
#   ompi-tcp   mpirun.openmpi -n 2 --bind-to core --mca pml ob1 --mca btl self,tcp mpi_pingpong
#   mpich-ucx  UCX_TLS=tcp,self UCX_NET_DEVICES=lo mpirun.mpich -n 2 -bind-to core mpi_pingpong
#   ucx-tcp    UCX_TLS=tcp,self UCX_NET_DEVICES=lo ucx_perftest -t tag_lat / -t tag_bw (server
#              on core 0, client on core 1; its MiB/s converted to MB/s)
#   ofi-rxd    fi_pingpong -p "udp;ofi_rxd" -e rdm -S SIZE (usec/xfer as lat; its MB/sec is a
#              ping-pong throughput: compare it with pp_MBps = size / lat_us)
#   sluice-tcp SLUICE_DRIVERS=tcp sluicerun -n 2 --bind core sluice-bench pingpong
#   sluice-udp SLUICE_DRIVERS=udp (udp under proto/reliable), same
#   raw-tcp, raw-udp  build-peers/raw_pingpong tcp|udp: nonblocking send/recv spinning, no
#              protocol (the kernel's floor; latency only, UDP up to 64 KiB)
# Results: bench/results/net-<timestamp>/<stack>.jsonl and table.md.
# bench/compare-netns.sh runs the same stacks with one rank in each of two namespace hosts.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-3}"
sizes="${2:-8,1M}"
build="${BUILD:-$repo/build}"
out="${OUT:-$repo/bench/results/net-$(date -u +%Y%m%dT%H%M%S)}"
stacks=ompi-tcp,mpich-ucx,ucx-tcp,ofi-rxd,sluice-tcp,sluice-udp,raw-tcp,raw-udp
mkdir -p "$out"

table() {
  "$here/compare-table.py" "$out" --stacks "$stacks" --peers ompi-tcp,mpich-ucx,ucx-tcp \
    --subjects sluice-tcp,sluice-udp --figures lat_us,bw_MBps,pp_MBps --vs sluice-udp/ofi-rxd --vs sluice-udp/sluice-tcp |
    tee "$out/table.md"
  echo "results in $out" >&2
}
if [ -n "${TABLE_ONLY:-}" ]; then table; exit 0; fi

# shellcheck source=SCRIPTDIR/net-peers.sh
source "$here/net-peers.sh"
prepare_peers

on_server() { taskset -c 0 "$@"; }
on_client() { taskset -c 1 "$@"; }
# shellcheck disable=SC2034,SC2154  # read / set by net-peers.sh
server_ip=127.0.0.1 ucx_dev=lo

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n 2 --bind-to core \
    --mca pml ob1 --mca btl self,tcp "$repo/build-peers/mpi_pingpong.openmpi" --sizes "$sizes" \
    --json --fresh --no-bibw --no-progress --impl ompi-tcp >>"$out/ompi-tcp.jsonl" 2>/dev/null
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo mpirun.mpich -n 2 -bind-to core \
    "$repo/build-peers/mpi_pingpong.mpich" --sizes "$sizes" --json --fresh --no-bibw --no-progress \
    --impl mpich-ucx >>"$out/mpich-ucx.jsonl" 2>/dev/null
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    ucx_row "$b" "$out/ucx-tcp.jsonl"
    # shellcheck disable=SC2154  # li: set by ucx_row (net-peers.sh)
    oi=$((li > 2000 ? 2000 : li))
    read -r olat opp < <(ofi_run "udp;ofi_rxd" rdm "$b" "$oi") || true
    echo "{\"bench\":\"pingpong\",\"impl\":\"ofi-rxd\",\"size\":$b,\"lat_us\":${olat:-null},\"bw_MBps\":null,\"ofi_MBps\":${opp:-null}}" \
      >>"$out/ofi-rxd.jsonl"
  done
  for d in tcp udp; do
    SLUICE_DRIVERS=$d "$build/bin/sluicerun" -n 2 --bind core "$build/bin/sluice-bench" pingpong \
      --sizes "$sizes" --json --no-progress >>"$out/sluice-$d.jsonl"
    "$repo/build-peers/raw_pingpong" $d --sizes "$sizes" --json >>"$out/raw-$d.jsonl"
  done
done
table
