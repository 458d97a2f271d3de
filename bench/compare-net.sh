#!/usr/bin/env bash
# Interleaved network comparison on loopback (issue 4): Sluice's tcp and udp drivers against
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

if ! command -v ucx_perftest >/dev/null || ! command -v fi_pingpong >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y ucx-utils libfabric-bin >&2
fi
BUILD="$build" "$repo/bench/peers/build.sh" >/dev/null
[ -x "$build/bin/sluice-bench" ] || { echo "build Sluice first (make)" >&2; exit 1; }

to_bytes() {  # 8, 64K, 1M -> bytes
  local s=$1
  case "$s" in
    *K) echo $((${s%K} * 1024)) ;; *M) echo $((${s%M} * 1048576)) ;; *G) echo $((${s%G} << 30)) ;;
    *) echo "$s" ;;
  esac
}
port=$((20000 + RANDOM % 20000))

# ucx_perftest TEST SIZE ITERS: prints the "Final:" line's figures (server core 0, client 1).
ucx_run() {
  port=$((port + 1))
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo taskset -c 0 ucx_perftest -p "$port" -t "$1" -s "$2" -n "$3" \
    >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo taskset -c 1 timeout 120 ucx_perftest 127.0.0.1 -p "$port" \
    -t "$1" -s "$2" -n "$3" 2>/dev/null | awk '$1 == "Final:"'
  wait "$srv" || true
}

# fi_pingpong SIZE ITERS: prints "usec/xfer MB/sec".
ofi_run() {
  port=$((port + 1))
  taskset -c 0 timeout 120 fi_pingpong -p "udp;ofi_rxd" -e rdm -S "$1" -I "$2" -B "$port" \
    >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  taskset -c 1 timeout 120 fi_pingpong -p "udp;ofi_rxd" -e rdm -S "$1" -I "$2" -P "$port" \
    127.0.0.1 2>/dev/null | awk 'NR == 2 {print $7, $6}'
  wait "$srv" || true
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n 2 --bind-to core \
    --mca pml ob1 --mca btl self,tcp "$repo/build-peers/mpi_pingpong.openmpi" --sizes "$sizes" \
    --json --no-progress --impl ompi-tcp >>"$out/ompi-tcp.jsonl" 2>/dev/null
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo mpirun.mpich -n 2 -bind-to core \
    "$repo/build-peers/mpi_pingpong.mpich" --sizes "$sizes" --json --no-progress \
    --impl mpich-ucx >>"$out/mpich-ucx.jsonl" 2>/dev/null
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    # Latency iterations and bandwidth messages: about 256 MiB / 1 GiB per size, as mpi_pingpong.
    li=$((b > 0 ? 268435456 / b : 10000)); li=$((li > 10000 ? 10000 : li < 100 ? 100 : li))
    bi=$((b > 0 ? 1073741824 / b : 100000)); bi=$((bi > 100000 ? 100000 : bi < 500 ? 500 : bi))
    lat=$(ucx_run tag_lat "$b" "$li" | awk '{print $3}')
    bw=$(ucx_run tag_bw "$b" "$bi" | awk '{printf "%.1f", $6 * 1.048576}')
    echo "{\"bench\":\"pingpong\",\"impl\":\"ucx-tcp\",\"size\":$b,\"lat_us\":${lat:-null},\"bw_MBps\":${bw:-null}}" \
      >>"$out/ucx-tcp.jsonl"
    oi=$((li > 2000 ? 2000 : li))
    read -r olat opp < <(ofi_run "$b" "$oi") || true
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
