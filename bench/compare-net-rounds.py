#!/usr/bin/env python3
"""Round-by-round verdicts of the network targets below for a bench/compare-net.sh or
bench/compare-netns.sh results directory (the n-th line of a stack's file for a size is
round n; every ratio is taken within its round):

    compare-net-rounds.py OUTDIR

  tcp 8 B latency      <= 0.95x the best peer (Open MPI tcp, MPICH/UCX tcp, UCX tcp)
  tcp 1 MiB windowed bandwidth >= 1.0x the best peer
  udp 8 B latency      <= 0.7x the best peer's (tcp) latency
  udp 1 MiB ping-pong throughput >= 4x udp;ofi_rxd's (fi_pingpong reports ping-pong
                       throughput, so like for like)
  udp 1 MiB windowed bandwidth >= 1.0x Sluice tcp's
Prints a markdown row per round and, last, in how many rounds each target was met.
"""
import json
import os
import sys

PEERS = ["ompi-tcp", "mpich-ucx", "ucx-tcp"]
MIB = 1048576


def load(out, stack):
    runs = {}
    path = os.path.join(out, stack + ".jsonl")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("{"):
                d = json.loads(line)
                runs.setdefault(d["size"], []).append(d)
    return runs


def main():
    out = sys.argv[1]
    stacks = PEERS + ["ofi-rxd", "sluice-tcp", "sluice-udp", "raw-tcp", "raw-udp"]
    data = {st: load(out, st) for st in stacks}
    # raw-udp has no 1 MiB (one datagram is at most 64 KiB).
    counts = {len(data[st].get(s, [])) for st in stacks for s in (8, MIB) if (st, s) != ("raw-udp", MIB)}
    if len(counts) != 1:
        sys.exit("compare-net-rounds.py: stacks ran different numbers of rounds (a failed run?)")
    rounds = counts.pop()
    met = dict(t8=0, t1=0, u8=0, u1=0, ut=0)
    print("| round | best peer 8 B (µs) | Sluice tcp 8 B | Sluice udp 8 B | raw tcp / raw udp 8 B"
          " | best peer 1 MiB bw (MB/s) | Sluice tcp 1 MiB bw | Sluice udp 1 MiB bw"
          " | udp;ofi_rxd 1 MiB (pp MB/s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in range(rounds):
        def v(st, size, key):
            return data[st][size][r].get(key)
        best8 = min(v(p, 8, "lat_us") for p in PEERS)
        best1 = max(v(p, MIB, "bw_MBps") for p in PEERS)
        t8, u8 = v("sluice-tcp", 8, "lat_us"), v("sluice-udp", 8, "lat_us")
        t1, u1 = v("sluice-tcp", MIB, "bw_MBps"), v("sluice-udp", MIB, "bw_MBps")
        ofi_pp = MIB / v("ofi-rxd", MIB, "lat_us")
        udp_pp = MIB / v("sluice-udp", MIB, "lat_us")
        met["t8"] += t8 / best8 <= 0.95
        met["t1"] += t1 / best1 >= 1.0
        met["u8"] += u8 / best8 <= 0.7
        met["u1"] += udp_pp / ofi_pp >= 4
        met["ut"] += u1 / t1 >= 1.0
        print(f"| {r + 1} | {best8:.2f} | {t8:.2f} ({t8 / best8:.2f}×) | {u8:.2f} ({u8 / best8:.2f}×)"
              f" | {v('raw-tcp', 8, 'lat_us'):.2f} / {v('raw-udp', 8, 'lat_us'):.2f} | {best1:.0f}"
              f" | {t1:.0f} ({t1 / best1:.2f}×) | {u1:.0f} ({u1 / t1:.2f}× tcp)"
              f" | {ofi_pp:.0f} (udp {udp_pp / ofi_pp:.1f}×) |")
    print(f"\nrounds meeting each target, of {rounds}: tcp 8 B <= 0.95x: {met['t8']}; "
          f"tcp 1 MiB >= 1.0x: {met['t1']}; udp 8 B <= 0.7x: {met['u8']}; "
          f"udp 1 MiB >= 4x ofi_rxd: {met['u1']}; udp 1 MiB bw >= tcp: {met['ut']}")


if __name__ == "__main__":
    main()
