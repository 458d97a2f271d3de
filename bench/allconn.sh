#!/usr/bin/env bash
# [OpenMPI-UD]'s startup benchmark over N = 2, 4, ..., 128 processes on this host (oversubscribed
# on a small machine): Sluice's udp and tcp drivers (SLUICE_DRIVERS=udp / tcp, so every peer
# goes through the network driver, over loopback) and Open MPI's tcp BTL as the peer.
# Writes bench/results/allconn.jsonl (one JSON object per run), the scaling model
# bench/results/allconn-model.txt (tools: sluice-scale) and, with gnuplot, allconn.png.
#
# Usage: bench/allconn.sh [--build DIR] [--sizes "2 4 8 ..."] [--no-peer]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
build="$repo/build"
sizes="2 4 8 16 32 64 128"
peer=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    *) sed -n '2,9p' "$0" >&2; exit 2 ;;
  esac
done
bin="$build/bin"
results="$repo/bench/results"
mkdir -p "$results"
out="$results/allconn.jsonl"
: >"$out"

for driver in udp tcp; do
  for n in $sizes; do
    SLUICE_DRIVERS=$driver "$bin/sluicerun" -n "$n" --timeout 600 \
      "$bin/sluice-bench" allconn --json | tee -a "$out"
  done
done

if [[ $peer == 1 ]] && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null
then
  peer_bin="$build/mpi_allconn.openmpi"
  mpicc.openmpi -O2 -std=c11 -o "$peer_bin" "$here/peers/mpi_allconn.c"
  root=()
  [[ $(id -u) -eq 0 ]] && root=(--allow-run-as-root)
  for n in $sizes; do
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 mpirun.openmpi \
      "${root[@]}" --oversubscribe --mca pml ob1 --mca btl tcp,self -n "$n" "$peer_bin" \
      --impl openmpi-tcp | tee -a "$out"
  done
fi

"$bin/sluice-scale" "$out" | tee "$results/allconn-model.txt"

if command -v gnuplot >/dev/null; then
  # Columns per implementation: N, time_us, mem_kB.
  for impl in udp+rel tcp openmpi-tcp; do
    grep "\"driver\":\"$impl\"" "$out" |
      sed -E 's/.*"n":([0-9]+).*"time_us":([0-9.]+).*"mem_kB":([0-9.]+).*/\1 \2 \3/' \
        >"$results/allconn-$impl.dat" || true
  done
  gnuplot <<GP
set terminal pngcairo size 1200,500 noenhanced
set output "$results/allconn.png"
set multiplot layout 1,2 title "allconn ([OpenMPI-UD]): every process sends 0 B to every other, loopback, 2 cores"
set logscale xy
set xlabel "processes N"
set key top left
set ylabel "time (ms)"
plot for [impl in "udp+rel tcp openmpi-tcp"] "$results/allconn-".impl.".dat" using 1:(\$2/1000) with linespoints title impl
set ylabel "MiB per process (RSS + socket buffers)"
plot for [impl in "udp+rel tcp openmpi-tcp"] "$results/allconn-".impl.".dat" using 1:(\$3/1024) with linespoints title impl
unset multiplot
GP
  echo "plot: $results/allconn.png"
fi
