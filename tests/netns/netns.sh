#!/usr/bin/env bash
# Network-namespace test hosts for Sluice's multi-host tests (needs root).
#
#   netns.sh run [--hosts N] [--dual] [--loss PCT] [--dup PCT] [--proto udp|tcp|all]
#                [--mtu BYTES] [--keep-boot] -- command [args...]
#
# Builds N (2..4, default 2) namespaces "hosts", each joined to a switch namespace by a veth
# link on a bridge: host i is 10.77.1.i/24 on eth0. With --dual every host has a second,
# independent link: eth1, 10.77.2.i/24 on a second bridge (two paths, for failover).
# --mtu sets every link's MTU (default 1500; up to 65535, loopback-like).
# --loss / --dup install nftables rules in every host on eth0/eth1:
# PCT may have one decimal (0.1): the rules then count in per mille (mod 1000 < 10 x PCT).
#   ingress: numgen random mod 100 < PCT drop        (packet loss; dropping on the sender's
#            output hook would make its sendmsg fail with EPERM, which is not loss)
#   egress:  numgen random mod 100 < PCT dup to ...   (the packet is sent twice)
# for the protocol given by --proto (default udp). With --keep-boot (the default) TCP
# traffic to or from the bootstrap port is exempt, so only the data path sees the faults.
#
# The command runs in the caller's namespace with these variables:
#   NETNS_HOSTS      the hosts' namespace names, comma separated (for sluicerun --hosts)
#   NETNS_HEAD       host 1's namespace (run sluicerun there: ip netns exec $NETNS_HEAD ...)
#   NETNS_BOOT_ADDR  host 1's eth0 address with the bootstrap port (sluicerun --boot-addr)
#   NETNS_LAUNCH     'ip netns exec {host}' (sluicerun --launch)
#   NETNS_PREFIX     prefix of every name created here
# With --loss / --dup, a command that succeeds while a configured fault never fired (the
# rule counters stayed 0) fails: the test must have run through the faults.
# Everything (namespaces, links, rules, processes inside) is removed when the command ends,
# fails, or the script is interrupted. Exit status: the command's; 77 when the hosts cannot
# be built (not root, no namespaces): ctest's SKIP_RETURN_CODE.
set -u

readonly skip_status=77
readonly boot_port=47001

usage() {
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

skip() {
  echo "netns.sh: SKIPPED: $*" >&2
  exit "$skip_status"
}

hosts=2 dual=0 loss=0 dup=0 proto=udp keep_boot=1 mtu=1500
[[ ${1:-} == run ]] || usage
shift
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --dual) dual=1; shift ;;
    --loss) loss=$2; shift 2 ;;
    --dup) dup=$2; shift 2 ;;
    --proto) proto=$2; shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --keep-boot) keep_boot=1; shift ;;
    --no-keep-boot) keep_boot=0; shift ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ $# -gt 0 && $hosts =~ ^[2-4]$ ]] || usage
[[ $proto == udp || $proto == tcp || $proto == all ]] || usage
[[ $mtu =~ ^[0-9]+$ && $mtu -ge 1280 && $mtu -le 65535 ]] || usage
# Percent with at most one decimal, as per mille for nftables.
per_mille() {
  [[ $1 =~ ^([0-9]{1,2})(\.([0-9]))?$ ]] || usage
  echo $((10#${BASH_REMATCH[1]} * 10 + 10#${BASH_REMATCH[3]:-0}))
}
loss_pm=$(per_mille "$loss") dup_pm=$(per_mille "$dup")
[[ $loss_pm == 0 ]] && loss=0
[[ $dup_pm == 0 ]] && dup=0

[[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
if [[ $loss != 0 || $dup != 0 ]]; then
  command -v nft >/dev/null || skip "nft (nftables) is not installed"
fi

# Unique per run, so parallel tests never share a name.
prefix="sl$$x"

# A run killed outright (SIGKILL, e.g. a ctest timeout) cannot run its trap: remove the
# namespaces of runs whose script is gone.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^sl[0-9]+x(h[0-9]+|sw)$'); do
  owner=${ns#sl}
  owner=${owner%%x*}
  if ! kill -0 "$owner" 2>/dev/null; then
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null && echo "netns.sh: removed $ns left by a killed run" >&2
  fi
done
switch="${prefix}sw"
created=()

cleanup() {
  local ns pids
  for ns in "${created[@]}"; do
    # Whatever still runs in our namespaces was started by this test: end it, so the
    # namespace really goes away with its links.
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  created=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

fail_setup() {
  echo "netns.sh: setting up the hosts failed at: $*" >&2
  # Not being allowed to make namespaces (a container without CAP_SYS_ADMIN) is a skip.
  exit "$skip_status"
}

make_ns() {
  ip netns add "$1" || fail_setup "ip netns add $1"
  created+=("$1")
  ip -n "$1" link set lo up || fail_setup "lo up in $1"
}

make_ns "$switch"
links=(1)
[[ $dual == 1 ]] && links=(1 2)
for link in "${links[@]}"; do
  ip -n "$switch" link add "br$link" type bridge || fail_setup "bridge br$link"
  ip -n "$switch" link set "br$link" up || fail_setup "br$link up"
done

host_names=()
for ((i = 1; i <= hosts; ++i)); do
  ns="${prefix}h$i"
  make_ns "$ns"
  host_names+=("$ns")
  for link in "${links[@]}"; do
    dev="eth$((link - 1))"
    port="h${i}l${link}"
    ip link add name "$dev" netns "$ns" type veth peer name "$port" netns "$switch" ||
      fail_setup "veth $ns:$dev <-> $switch:$port"
    ip -n "$switch" link set "$port" mtu "$mtu" master "br$link" up ||
      fail_setup "$port on br$link"
    ip -n "$ns" link set "$dev" mtu "$mtu" || fail_setup "mtu $mtu on $ns:$dev"
    ip -n "$ns" addr add "10.77.$link.$i/24" dev "$dev" || fail_setup "address on $ns:$dev"
    ip -n "$ns" link set "$dev" up || fail_setup "$ns:$dev up"
  done
done

# nftables faults: every packet between two hosts passes the sender's egress rules and the
# receiver's ingress rules once. Duplicates go to the same destination, same device.
if [[ $loss != 0 || $dup != 0 ]]; then
  case $proto in
    udp) match="meta l4proto udp" ;;
    tcp) match="meta l4proto tcp" ;;
    all) match="" ;;
  esac
  exempt=""
  [[ $keep_boot == 1 ]] && exempt="tcp sport $boot_port accept
      tcp dport $boot_port accept"
  for ns in "${host_names[@]}"; do
    egress="" ingress=""
    for link in "${links[@]}"; do
      dev="eth$((link - 1))"
      [[ $dup != 0 ]] && egress+="
      oifname \"$dev\" $match numgen random mod 1000 < $dup_pm counter dup to ip daddr device \"$dev\""
      [[ $loss != 0 ]] && ingress+="
      iifname \"$dev\" $match numgen random mod 1000 < $loss_pm counter drop"
    done
    ip netns exec "$ns" nft -f - <<EOF || fail_setup "nftables rules in $ns"
table ip sluice_faults {
  chain egress {
    type filter hook output priority 0; policy accept;
    $exempt
    $egress
  }
  chain ingress {
    type filter hook prerouting priority 0; policy accept;
    $exempt
    $ingress
  }
}
EOF
  done
fi

# Every link must be up (carrier on both veth ends) before the test starts.
for ns in "${host_names[@]}"; do
  for link in "${links[@]}"; do
    dev="eth$((link - 1))"
    for ((attempt = 0; attempt < 50; ++attempt)); do
      ip -n "$ns" -o link show dev "$dev" | grep -q "state UP" && break
      sleep 0.1
    done
    ip -n "$ns" -o link show dev "$dev" | grep -q "state UP" ||
      fail_setup "$ns:$dev never came up"
  done
done

export NETNS_PREFIX="$prefix"
export NETNS_HOSTS
NETNS_HOSTS=$(IFS=,; echo "${host_names[*]}")
export NETNS_HEAD="${prefix}h1"
export NETNS_BOOT_ADDR="10.77.1.1:$boot_port"
export NETNS_LAUNCH="ip netns exec {host}"
"$@"
status=$?

# Packets each kind of fault rule matched, over every host.
fault_count() {
  local ns total=0 n
  for ns in "${host_names[@]}"; do
    for n in $(ip netns exec "$ns" nft list chain ip sluice_faults "$1" 2>/dev/null |
      grep -o 'counter packets [0-9]*' | grep -o '[0-9]*$'); do
      total=$((total + n))
    done
  done
  echo "$total"
}
if [[ $loss != 0 || $dup != 0 ]]; then
  dropped=$(fault_count ingress) duplicated=$(fault_count egress)
  echo "netns.sh: nftables dropped $dropped and duplicated $duplicated $proto packets" >&2
  if [[ $status == 0 && $loss != 0 && $dropped == 0 ]]; then
    echo "netns.sh: FAILED: --loss $loss but no packet was dropped" >&2
    status=1
  fi
  if [[ $status == 0 && $dup != 0 && $duplicated == 0 ]]; then
    echo "netns.sh: FAILED: --dup $dup but no packet was duplicated" >&2
    status=1
  fi
fi
exit "$status"
