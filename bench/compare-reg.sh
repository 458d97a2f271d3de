#!/usr/bin/env bash
# Registration strategies compared, interleaved, for the adaptive strategy's acceptance:
# sluice-bench reuse (--pattern always|never|mixed) with every strategy in turn within each
# round (ROUNDS rounds in one job, the median time per message over them), and sluice-bench
# firsttouch (first vs best round trip per strategy), over tcp and udp on loopback with
# zero-copy forced on (SLUICE_TCP_ZEROCOPY=on / SLUICE_UDP_ZEROCOPY=on: under `auto` a
# loopback route never registers and every strategy is the copy path; the JSON's
# route_registers says which held), each with this machine's registration cost and with the
# emulated InfiniBand cost (SLUICE_REG_EMULATE=68,200). Then a table per driver x emulation x
# pattern x size: each strategy's median time per message and adaptive's ratio to the best
# forced strategy; and the first-touch table (first/best bandwidth per strategy).
#
#   bench/compare-reg.sh [ROUNDS] [SIZES]        (defaults: 5 rounds, 64K,1M,16M; ~5-10 min)
#
# Results: bench/results/reg-<timestamp>/{reuse,firsttouch}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-5}"
sizes="${2:-64K,1M,16M}"
build="${BUILD:-$repo/build}"
out="$repo/bench/results/reg-$(date -u +%Y%m%dT%H%M%S)"
strategies="copy,register,cache,ondemand,superpipeline,pipeline,adaptive"
[ -x "$build/bin/sluice-bench" ] || { echo "build Sluice first" >&2; exit 1; }
mkdir -p "$out"

run() {  # driver emulation bench-args...: one job, its JSON lines tagged and appended
  local drv="$1" emu="$2" file="$3"
  shift 3
  local env=(SLUICE_DRIVERS="$drv" SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on)
  [ "$emu" = off ] || env+=(SLUICE_REG_EMULATE="$emu")
  env "${env[@]}" "$build/bin/sluicerun" -n 2 --bind core "$build/bin/sluice-bench" "$@" --json |
    sed -n "s/^{/{\"drv\":\"$drv\",\"emu\":\"$emu\",/p" >>"$out/$file"
}

for drv in tcp udp; do
  for emu in off 68,200; do
    for pattern in always never mixed; do
      echo "reuse $drv emulate=$emu $pattern" >&2
      run "$drv" "$emu" reuse.jsonl reuse --pattern "$pattern" --sizes "$sizes" \
        --strategies "$strategies" --reps "$rounds"
    done
    echo "firsttouch $drv emulate=$emu" >&2
    run "$drv" "$emu" firsttouch.jsonl firsttouch --sizes "$sizes" --strategies "$strategies" \
      --reps 5
  done
done

"$here/compare-reg-table.py" "$out" | tee "$out/table.md"
echo "results in $out" >&2
