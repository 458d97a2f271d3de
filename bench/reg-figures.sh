#!/usr/bin/env bash
# The registration figures of docs/PERFORMANCE.md ("Registration strategies, reuse and first
# touch"), in one go: sluice-bench regcost, sluice-tune (a profile with this machine's
# registration cost, one with [NewMadeleine]'s InfiniBand cost emulated), then per driver
# (tcp, udp on loopback, zero-copy forced on: under `auto` a loopback route registers nothing)
# and registration cost (real, SLUICE_REG_EMULATE=68,200) sluice-bench firsttouch, pipeline and
# model (each strategy in turn within one job: interleaved), sluice-bench is per strategy, and
# what the model predicts for a 100 Gb/s NIC (sluice-tune --predict --net). Then the tables
# (bench/reg-figures-table.py), ready to paste.
#
#   bench/reg-figures.sh [--quiet]     (~5 min loaded; --quiet runs every job under
#                                       bench/quiet.sh --freeze --idle-wait 10)
#
# Environment: BUILD (default build), OUT (default docs/data/reg-figures), IMG (default
# docs/img), NIC="λ_us,MB/s,g_us" (default 1.5,12500,1: a 100 Gb/s NIC, typical verbs latency).
# Results: OUT/*.jsonl, OUT/*.profile, OUT/nic100*.md, OUT/tables.md; IMG/reg-*.png.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
# Paths relative to the repository: they end up in the outputs (profiles named in model runs).
cd "$repo"
build="${BUILD:-build}"
out="${OUT:-docs/data/reg-figures}"
img="${IMG:-docs/img}"
nic="${NIC:-1.5,12500,1}"
quiet=()
[ "${1:-}" = --quiet ] && quiet=("$here/quiet.sh" --freeze --idle-wait 10 --)
bin="$build/bin"
[ -x "$bin/sluice-bench" ] && [ -x "$bin/sluice-tune" ] || { echo "build Sluice first" >&2; exit 1; }
command -v gnuplot >/dev/null || echo "no gnuplot: JSON and tables only, no PNG" >&2
mkdir -p "$out" "$img"
# Only this script's own outputs (the folder also keeps earlier runs' data).
rm -f "$out"/{firsttouch,pipeline,model,is,regcost}.jsonl "$out"/nic100-*.jsonl
strategies="copy,register,cache,ondemand,superpipeline,pipeline,adaptive"
sizes="64K,256K,1M,4M,16M"
load() { cut -d' ' -f1 /proc/loadavg; }
plot() {  # --plot FILE when gnuplot is there
  command -v gnuplot >/dev/null && echo "--plot $img/$1.png" || true
}

run() {  # drv emu file bench-args...: one 2-rank job, its JSON lines tagged and appended
  local drv="$1" emu="$2" file="$3"
  shift 3
  local env=(SLUICE_DRIVERS="$drv" SLUICE_TCP_ZEROCOPY=on SLUICE_UDP_ZEROCOPY=on
    SLUICE_TUNE_PROFILE="$out/tune-$emu.profile")
  [ "$emu" = off ] || env+=(SLUICE_REG_EMULATE="$emu")
  echo "$file $drv emulate=$emu (load $(load))" >&2
  # shellcheck disable=SC2068
  "${quiet[@]}" env "${env[@]}" "$bin/sluicerun" -n 2 --bind core "$bin/sluice-bench" "$@" \
    --json | sed -n "s/^{/{\"drv\":\"$drv\",\"emu\":\"$emu\",\"load\":\"$(load)\",/p" \
    >>"$out/$file"
}

echo "regcost (load $(load))" >&2
"${quiet[@]}" "$bin/sluicerun" -n 1 "$bin/sluice-bench" regcost --json >"$out/regcost.jsonl"
for emu in off 68,200; do
  echo "sluice-tune emulate=$emu (load $(load))" >&2
  e=()
  [ "$emu" = off ] || e=(SLUICE_REG_EMULATE="$emu")
  "${quiet[@]}" env "${e[@]}" "$bin/sluice-tune" --output "$out/tune-$emu.profile" \
    >"$out/tune-$emu.txt"
done

for drv in tcp udp; do
  for emu in off 68,200; do
    tag="$drv-${emu/,/-}"
    # shellcheck disable=SC2046
    run "$drv" "$emu" firsttouch.jsonl firsttouch --sizes "$sizes" --strategies "$strategies" \
      --iters 10 $(plot "reg-firsttouch-$tag")
    # shellcheck disable=SC2046
    run "$drv" "$emu" pipeline.jsonl pipeline --sizes "$sizes" --iters 10 \
      $(plot "reg-pipeline-$tag")
    # shellcheck disable=SC2046
    run "$drv" "$emu" model.jsonl model --sizes 64K,128K,256K,512K,1M,2M,4M,8M,16M \
      $(plot "reg-model-$tag")
  done
  for emu in off 68,200; do
    # shellcheck disable=SC2046
    run "$drv" "$emu" is.jsonl is --strategies "$strategies" --sizes 4M --iters 5 \
      $(plot "reg-is-$drv-${emu/,/-}")
  done
done

# The 100 Gb/s NIC: this machine's B_copy(L) (the profile) and registration cost as regcost
# measured it (λ_reg, B_reg), then [NewMadeleine]'s InfiniBand registration (68 µs + 200 ns per
# 4 KiB page = 20480 MB/s), the NIC assumed (NIC).
reg="$(python3 - "$out/regcost.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "lambda_reg_us" in j:
        print(f"{j['lambda_reg_us']},{j['B_reg_MBps']}")
PY
)"
for emu in off 68,200; do
  r="$reg"
  [ "$emu" = off ] || r=68,20480
  for fmt in md jsonl; do
    j=()
    [ "$fmt" = md ] || j=(--json)
    "$bin/sluice-tune" --predict --profile "$out/tune-off.profile" --net "$nic" --reg "$r" \
      --sizes 64K,256K,1M,4M,16M "${j[@]}" >"$out/nic100-$emu.$fmt"
  done
done

"$here/reg-figures-table.py" "$out" | tee "$out/tables.md"
echo "results in $out, plots in $img/reg-*.png" >&2
