#!/usr/bin/env bash
# Interleaved comparison of the ofi driver with raw libfabric and with Sluice's native
# drivers, on loopback, in one session: R rounds, each running every stack in B batches,
# then the table of medians [min-max] over the rounds (bench/compare-table.py) with the
# driver's overhead over raw libfabric on the same provider and endpoint type (the targets:
# at most 0.3 µs at 8 B, at most 10 % at 1 MiB). Two ranks, one per core.
#
#   bench/compare-ofi.sh [ROUNDS] [SIZES]        (defaults: 3 rounds, 8,64K,1M)
#   STACKS=fi-rxm,ofi-rxm,fi-shm,ofi-shm bench/compare-ofi.sh ...   a subset of the stacks
#   BATCHES=5 bench/compare-ofi.sh ...           batches per stack, size and round (default 3)
#   OUT=dir bench/compare-ofi.sh ...             append to an earlier run's results
#   TABLE_ONLY=1 OUT=dir bench/compare-ofi.sh    just print the table of dir
#
# Figures. fi_pingpong reports only a mean (usec/xfer: its total time over the iterations),
# so each stack runs, per size and round, B short batches of the same iteration count (the
# round's iterations split B ways) and a round's figure is the median of its batches' mean
# half round trips (med_us): a batch a preemption hit does not move it. The table gives the
# median of those over the rounds, for every stack alike, and the overhead columns compare
# them. avg_us (the mean over all batches of a round, what the script compared before) and
# lat_us (sluice-bench's median single round trip; fi_pingpong has none) are shown beside.
# Stacks:
#   ofi-rxm    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER="tcp;ofi_rxm" (rdm)   sluicerun -n 2
#   ofi-msg    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=tcp (msg)              --bind core
#   ofi-udp    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=udp (dgram + rel)      sluice-bench
#   ofi-shm    SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=shm (rdm)              pingpong --iters N
#   sluice-tcp, sluice-udp, sluice-shm   the native drivers, same command
#   fi-rxm, fi-msg, fi-udp, fi-shm   fi_pingpong -p PROVIDER -e rdm|msg|dgram -S SIZE -I N
#              (server on core 0, client on core 1). Debian's libfabric-bin has fi_pingpong
#              only (fabtests' fi_rdm_tagged_pingpong is not packaged); udp's datagrams hold
#              1472 bytes, so fi-udp and its row stop at 8 B.
# Results: bench/results/ofi-<timestamp>/<stack>.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-3}"
sizes="${2:-8,64K,1M}"
build="${BUILD:-$repo/build}"
out="${OUT:-$repo/bench/results/ofi-$(date -u +%Y%m%dT%H%M%S)}"
batches="${BATCHES:-3}"
all=fi-rxm,fi-msg,fi-udp,fi-shm,ofi-rxm,ofi-msg,ofi-udp,ofi-shm,sluice-tcp,sluice-udp,sluice-shm
stacks="${STACKS:-$all}"
mkdir -p "$out"
want() { [[ ",$stacks," == *",$1,"* ]]; }

table() {
  local peers="" o overs=()
  for o in fi-rxm fi-msg fi-udp fi-shm; do if want "$o"; then peers+="${peers:+,}$o"; fi; done
  for o in ofi-rxm/fi-rxm ofi-msg/fi-msg ofi-udp/fi-udp ofi-shm/fi-shm ofi-rxm/sluice-tcp \
    ofi-msg/sluice-tcp ofi-udp/sluice-udp ofi-shm/sluice-shm; do
    if want "${o%/*}" && want "${o#*/}"; then overs+=(--over "$o"); fi
  done
  "$here/compare-table.py" "$out" --stacks "$stacks" --peers "$peers" \
    --subjects none --figures med_us,avg_us,lat_us "${overs[@]}" | tee "$out/table.md"
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

# iters BYTES: the round's iterations (fi_pingpong's, as before: at most 2000) split into
# `batches` batches.
iters() {
  set_iters "$1"
  # shellcheck disable=SC2154  # li: set by set_iters (net-peers.sh)
  local n=$((li > 2000 ? 2000 : li))
  n=$((n / batches))
  echo $((n < 20 ? 20 : n))
}

# summary STACK BYTES MEANS... [-- LAT]: one JSON line: the median and the mean of the batch
# means, and LAT (sluice-bench's median round trip of the batches, median) if given.
summary() {
  python3 - "$@" <<'PY'
import json, statistics, sys
stack, size, rest = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
lat = []
if "--" in rest:
    i = rest.index("--")
    rest, lat = rest[:i], rest[i + 1:]
means = [float(x) for x in rest if x not in ("", "null")]
lats = [float(x) for x in lat if x not in ("", "null")]
print(json.dumps({"bench": "pingpong", "impl": stack, "size": size,
                  "med_us": statistics.median(means) if means else None,
                  "avg_us": statistics.mean(means) if means else None,
                  "lat_us": statistics.median(lats) if lats else None,
                  "batches": len(means)}))
PY
}

# fi_row STACK PROVIDER EP BYTES: fi_pingpong at BYTES, `batches` times.
fi_row() {
  local n lat k means=()
  n=$(iters "$4")
  for ((k = 0; k < batches; k++)); do
    lat=""
    read -r lat _ < <(ofi_run "$2" "$3" "$4" "$n") || true
    means+=("${lat:-null}")
  done
  summary "$1" "$4" "${means[@]}" >>"$out/$1.jsonl"
}

# sluice_row STACK BYTES ENV...: sluice-bench pingpong under sluicerun, `batches` times.
sluice_row() {
  local stack=$1 b=$2 n k line means=() lats=()
  shift 2
  n=$(iters "$b")
  for ((k = 0; k < batches; k++)); do
    line=$(env "$@" "$build/bin/sluicerun" -n 2 --bind core "$build/bin/sluice-bench" pingpong \
      --sizes "$b" --iters "$n" --json --no-progress | grep '"pingpong"' | head -1) ||
      echo "$stack failed" >&2
    [ -n "$line" ] || line='{}'
    means+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("avg_us"))' "$line")")
    lats+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("lat_us"))' "$line")")
  done
  summary "$stack" "$b" "${means[@]}" -- "${lats[@]}" >>"$out/$stack.jsonl"
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    if want fi-rxm; then fi_row fi-rxm "tcp;ofi_rxm" rdm "$b"; fi
    if want ofi-rxm; then sluice_row ofi-rxm "$b" SLUICE_DRIVERS=ofi "SLUICE_OFI_PROVIDER=tcp;ofi_rxm"; fi
    if want fi-msg; then fi_row fi-msg tcp msg "$b"; fi
    if want ofi-msg; then sluice_row ofi-msg "$b" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=tcp; fi
    if [ "$b" -le 1024 ] && want fi-udp; then fi_row fi-udp udp dgram "$b"; fi
    if want ofi-udp; then
      sluice_row ofi-udp "$b" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=udp SLUICE_OFI_ENDPOINT=dgram
    fi
    if want fi-shm; then fi_row fi-shm shm rdm "$b"; fi
    if want ofi-shm; then sluice_row ofi-shm "$b" SLUICE_DRIVERS=ofi SLUICE_OFI_PROVIDER=shm; fi
    if want sluice-tcp; then sluice_row sluice-tcp "$b" SLUICE_DRIVERS=tcp; fi
    if want sluice-udp; then sluice_row sluice-udp "$b" SLUICE_DRIVERS=udp; fi
    if want sluice-shm; then sluice_row sluice-shm "$b" SLUICE_DRIVERS=shm; fi
  done
done
table
