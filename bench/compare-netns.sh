#!/usr/bin/env bash
# bench/compare-net.sh between two network-namespace hosts: the same stacks, one
# rank in each of two tests/netns hosts joined by veth links on a bridge (10.77.1.1 and
# 10.77.1.2, eth0), instead of two processes on 127.0.0.1. Needs root.
#
#   bench/compare-netns.sh [ROUNDS] [SIZES]      (defaults: 3 rounds, 8,1M)
#   MTU=65535 bench/compare-netns.sh ...         the links' MTU (default 1500; Sluice udp and
#                                                the udp providers size datagrams from it)
#   OUT=dir bench/compare-netns.sh ...           append to an earlier run's results
#   TABLE_ONLY=1 OUT=dir bench/compare-netns.sh  just print the table of dir
#
# tests/netns/netns.sh builds the hosts, runs this script again inside (--inside) and removes
# everything when it ends or fails; the host names resolve in both namespaces through
# /etc/netns/<ns>/hosts (bind-mounted by `ip netns exec`), removed on exit too.
# Ranks are pinned to core 0 (host 1) and core 1 (host 2). Commands per stack ($A/$B the
# namespaces, 10.77.1.1 = $A's eth0; ssh = bench/peers/netns_ssh.sh, which runs its command
# through a shell in namespace <host>; pin = bench/peers/pin_rank.sh: taskset -c <rank>):
#   ompi-tcp   ip netns exec $A mpirun.openmpi -n 2 --host $A,$B --mca plm_rsh_agent ssh
#              --bind-to none --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include eth0
#              --mca oob_tcp_if_include eth0 pin mpi_pingpong.openmpi
#   mpich-ucx  UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 ip netns exec $A mpirun.mpich -n 2
#              -hosts $A,$B -launcher ssh -launcher-exec ssh -iface eth0 pin mpi_pingpong.mpich
#   ucx-tcp    UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 ucx_perftest: server in $A (core 0),
#              client in $B (core 1) -> 10.77.1.1
#   ofi-rxd    fi_pingpong -p "udp;ofi_rxd" -e rdm, server in $A, client in $B
#   ofi-tcp    fi_pingpong -p tcp -e msg, the same (libfabric's tcp provider)
#   sluice-tcp SLUICE_DRIVERS=tcp ip netns exec $A sluicerun --hosts $A,$B
#              --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr 10.77.1.1:PORT
#              --bind core sluice-bench pingpong
#   sluice-udp SLUICE_DRIVERS=udp, same
#   raw-tcp, raw-udp  raw_pingpong tcp|udp --listen 10.77.1.1:PORT in $A (core 0),
#              --connect 10.77.1.1:PORT in $B (core 1)
# Results: bench/results/netns-<timestamp>/<stack>.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
inside=0
if [ "${1:-}" = --inside ]; then
  inside=1
  shift
fi
rounds="${1:-3}"
sizes="${2:-8,1M}"
build="${BUILD:-$repo/build}"
mtu="${MTU:-1500}"
stacks=ompi-tcp,mpich-ucx,ucx-tcp,ofi-rxd,ofi-tcp,sluice-tcp,sluice-udp,raw-tcp,raw-udp

table() {
  "$here/compare-table.py" "$1" --stacks "$stacks" --peers ompi-tcp,mpich-ucx,ucx-tcp \
    --subjects sluice-tcp,sluice-udp --figures lat_us,bw_MBps,pp_MBps --vs sluice-udp/ofi-rxd \
    --vs sluice-udp/sluice-tcp --vs sluice-tcp/raw-tcp --vs sluice-udp/raw-udp --rounds | tee "$1/table.md"
  echo "results in $1" >&2
}

if [ "$inside" = 0 ]; then
  out="${OUT:-$repo/bench/results/netns-$(date -u +%Y%m%dT%H%M%S)}"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  if [ -n "${TABLE_ONLY:-}" ]; then table "$out"; exit 0; fi
  # shellcheck source=SCRIPTDIR/net-peers.sh
  source "$here/net-peers.sh"
  prepare_peers
  status=0
  OUT="$out" BUILD="$build" "$repo/tests/netns/netns.sh" run --hosts 2 --mtu "$mtu" -- \
    "$here/compare-netns.sh" --inside "$rounds" "$sizes" || status=$?
  [ "$status" = 77 ] && echo "compare-netns.sh: the namespace hosts could not be built" >&2
  [ "$status" = 0 ] && table "$out"
  exit "$status"
fi

# Inside netns.sh run: NETNS_HOSTS is "A,B".
out="$OUT"
IFS=, read -r A B <<<"$NETNS_HOSTS"
ip_a=10.77.1.1
hosts_files=()
cleanup_hosts() {
  local f
  for f in "${hosts_files[@]}"; do rm -rf "/etc/netns/$f"; done
}
trap cleanup_hosts EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# /etc/netns/<ns> of runs killed outright (netns.sh's names: sl<pid>x...).
for d in /etc/netns/sl*x*; do
  [ -d "$d" ] || continue
  owner=${d#/etc/netns/sl}
  owner=${owner%%x*}
  [[ $owner =~ ^[0-9]+$ ]] && ! kill -0 "$owner" 2>/dev/null && rm -rf "$d"
done
for ns in "$A" "$B"; do
  mkdir -p "/etc/netns/$ns"
  hosts_files+=("$ns")
  printf '127.0.0.1 localhost\n10.77.1.1 %s\n10.77.1.2 %s\n' "$A" "$B" >"/etc/netns/$ns/hosts"
done
echo "hosts $A ($ip_a) and $B (10.77.1.2), MTU $mtu, into $out" >&2

in_a() { ip netns exec "$A" "$@"; }
in_b() { ip netns exec "$B" "$@"; }
warn() { echo "compare-netns.sh: $* failed (recorded as null)" >&2; }

on_server() { in_a taskset -c 0 "$@"; }
on_client() { in_b taskset -c 1 "$@"; }
# shellcheck disable=SC2034,SC2154  # read / set by net-peers.sh
server_ip=$ip_a ucx_dev=eth0
# shellcheck source=SCRIPTDIR/net-peers.sh
source "$here/net-peers.sh"

# raw_pingpong tcp|udp: ponger in A, pinger (prints the JSON) in B.
raw_run() {
  port=$((port + 1))
  in_a taskset -c 0 timeout 120 "$repo/build-peers/raw_pingpong" "$1" --listen "$ip_a:$port" \
    --sizes "$sizes" >/dev/null &
  local srv=$!
  in_b taskset -c 1 timeout 120 "$repo/build-peers/raw_pingpong" "$1" --connect "$ip_a:$port" \
    --sizes "$sizes" --json
  wait "$srv" || true
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds $(date -u +%H:%M:%S)" >&2
  in_a timeout 120 mpirun.openmpi -n 2 --host "$A,$B" --mca plm_rsh_agent "$here/peers/netns_ssh.sh" \
    --bind-to none --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include eth0 \
    --mca oob_tcp_if_include eth0 "$here/peers/pin_rank.sh" "$repo/build-peers/mpi_pingpong.openmpi" \
    --sizes "$sizes" --json --fresh --no-bibw --no-progress --impl ompi-tcp 2>/dev/null | grep '^{' \
    >>"$out/ompi-tcp.jsonl" || warn ompi-tcp
  UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 in_a timeout 120 mpirun.mpich -n 2 -hosts "$A,$B" \
    -launcher ssh -launcher-exec "$here/peers/netns_ssh.sh" -iface eth0 "$here/peers/pin_rank.sh" \
    "$repo/build-peers/mpi_pingpong.mpich" --sizes "$sizes" --json --fresh --no-bibw --no-progress \
    --impl mpich-ucx 2>/dev/null | grep '^{' >>"$out/mpich-ucx.jsonl" || warn mpich-ucx
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    ucx_row "$b" "$out/ucx-tcp.jsonl"
    # shellcheck disable=SC2154  # li: set by ucx_row (net-peers.sh)
    oi=$((li > 2000 ? 2000 : li))
    for p in ofi-rxd ofi-tcp; do
      olat="" opp=""
      if [ $p = ofi-rxd ]; then
        read -r olat opp < <(ofi_run "udp;ofi_rxd" rdm "$b" "$oi") || true
      else
        read -r olat opp < <(ofi_run tcp msg "$b" "$oi") || true
      fi
      [ -n "$olat" ] || warn "$p $s"
      echo "{\"bench\":\"pingpong\",\"impl\":\"$p\",\"size\":$b,\"lat_us\":${olat:-null},\"bw_MBps\":null,\"ofi_MBps\":${opp:-null}}" \
        >>"$out/$p.jsonl"
    done
  done
  for d in tcp udp; do
    port=$((port + 1))
    SLUICE_DRIVERS=$d in_a timeout 120 "$build/bin/sluicerun" --hosts "$A,$B" \
      --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr "$ip_a:$port" --bind core \
      "$build/bin/sluice-bench" pingpong --sizes "$sizes" --json --no-progress \
      >>"$out/sluice-$d.jsonl" || warn "sluice-$d"
    raw_run $d >>"$out/raw-$d.jsonl" || warn "raw-$d"
  done
done
