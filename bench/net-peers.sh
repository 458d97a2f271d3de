# shellcheck shell=bash disable=SC2154  # on_server, on_client, server_ip, ucx_dev, build, repo: the caller's
# Shared by bench/compare-net.sh (both sides on loopback) and bench/compare-netns.sh (one side
# in each of two namespace hosts): sizes, iteration counts and the client/server peers.
# Sourced; the caller defines
#   on_server CMD...   run CMD where the servers live (pinned to core 0)
#   on_client CMD...   run CMD where the clients live (pinned to core 1)
#   server_ip          the address clients connect to
#   ucx_dev            UCX_NET_DEVICES for ucx_perftest

# prepare_peers: ucx_perftest and fi_pingpong installed (Debian), the MPI peers built for
# $build, and Sluice built there.
prepare_peers() {
  if ! command -v ucx_perftest >/dev/null || ! command -v fi_pingpong >/dev/null; then
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y ucx-utils libfabric-bin >&2
  fi
  BUILD="$build" "$repo/bench/peers/build.sh" >/dev/null
  [ -x "$build/bin/sluice-bench" ] || { echo "build Sluice first (make)" >&2; exit 1; }
}

to_bytes() {  # 8, 64K, 1M -> bytes
  local s=$1
  case "$s" in
    *K) echo $((${s%K} * 1024)) ;; *M) echo $((${s%M} * 1048576)) ;; *G) echo $((${s%G} << 30)) ;;
    *) echo "$s" ;;
  esac
}
port=$((20000 + RANDOM % 20000))

# set_iters BYTES: li (latency iterations) and bi (bandwidth messages), about 256 MiB / 1 GiB
# per size, as mpi_pingpong.
set_iters() {
  local b=$1
  li=$((b > 0 ? 268435456 / b : 10000)); li=$((li > 10000 ? 10000 : li < 100 ? 100 : li))
  bi=$((b > 0 ? 1073741824 / b : 100000)); bi=$((bi > 100000 ? 100000 : bi < 500 ? 500 : bi))
}

# ucx_perftest TEST SIZE ITERS: prints the "Final:" line's figures.
ucx_run() {
  port=$((port + 1))
  UCX_TLS=tcp,self UCX_NET_DEVICES=$ucx_dev on_server timeout 120 ucx_perftest -p "$port" \
    -t "$1" -s "$2" -n "$3" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  UCX_TLS=tcp,self UCX_NET_DEVICES=$ucx_dev on_client timeout 120 ucx_perftest "$server_ip" \
    -p "$port" -t "$1" -s "$2" -n "$3" 2>/dev/null | awk '$1 == "Final:"'
  wait "$srv" || true
}

# ucx_row BYTES FILE: one JSON line of ucx_perftest's tag latency and bandwidth at BYTES.
ucx_row() {
  local lat bw
  set_iters "$1"
  lat=$(ucx_run tag_lat "$1" "$li" | awk '{print $3}')
  bw=$(ucx_run tag_bw "$1" "$bi" | awk '{printf "%.1f", $6 * 1.048576}')
  echo "{\"bench\":\"pingpong\",\"impl\":\"ucx-tcp\",\"size\":$1,\"lat_us\":${lat:-null},\"bw_MBps\":${bw:-null}}" \
    >>"$2"
}

# fi_pingpong PROVIDER EP SIZE ITERS: prints "usec/xfer MB/sec".
ofi_run() {
  port=$((port + 1))
  on_server timeout 120 fi_pingpong -p "$1" -e "$2" -S "$3" -I "$4" -B "$port" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  on_client timeout 120 fi_pingpong -p "$1" -e "$2" -S "$3" -I "$4" -P "$port" "$server_ip" \
    2>/dev/null | awk 'NR == 2 {print $7, $6}'
  wait "$srv" || true
}
