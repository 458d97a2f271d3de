#!/usr/bin/env python3
"""Table of an interleaved comparison (bench/compare-pingpong.sh, bench/compare-net.sh).

    compare-table.py OUTDIR --stacks a,b,c --peers a,b [--subjects c] [--figures lat_us,bw_MBps]
                     [--vs x/y ...] [--over x/y ...] [--rounds]

Reads OUTDIR/<stack>.jsonl (one JSON object per size and run, with at least size and the
figures), prints per size and figure the median [min-max] over the runs of every stack,
each non-peer stack's ratio to the best peer of that figure (lower latency / higher
bandwidth), one extra ratio column per --vs x/y (stack x's median over stack y's), and one
column per --over x/y: x's overhead over y (latency: the difference in µs and in %;
throughput: x's difference from y in %, negative when lower). --subjects none: no best-peer column.
Figures: lat_us (µs, lower is better), bw_MBps (windowed bandwidth, MB/s), bibw_MBps
(bidirectional windowed bandwidth), rate_Mmsgs (multi-pair message rate, bench/peers/mpi_mrate)
and pp_MBps (ping-pong throughput, size / lat_us, derived: what fi_pingpong reports).
With --rounds, also one row per round (the n-th line of every stack's file for a size is
round n) with the same ratios computed within the round.
"""
import argparse
import json
import os
import statistics

LABELS = {
    "lat_us": ("latency median (µs)", True),
    "avg_us": ("latency mean (µs)", True),
    "med_us": ("latency, median of batch means (µs)", True),
    "bw_MBps": ("windowed bw median (MB/s)", False),
    "pp_MBps": ("ping-pong throughput (MB/s)", False),
    "bibw_MBps": ("bidirectional bw median (MB/s)", False),
    "rate_Mmsgs": ("message rate, all pairs (10^6 msg/s)", False),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--stacks", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--subjects", help="stacks given a ratio to the best peer (default: the non-peers)")
    ap.add_argument("--figures", default="lat_us,bw_MBps")
    ap.add_argument("--vs", action="append", default=[])
    ap.add_argument("--over", action="append", default=[])
    ap.add_argument("--rounds", action="store_true", help="also a row per round")
    a = ap.parse_args()
    stacks = a.stacks.split(",")
    peers = a.peers.split(",")
    figures = a.figures.split(",")
    data = {}
    for st in stacks:
        path = os.path.join(a.out, st + ".jsonl")
        if not os.path.exists(path):
            continue
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if d.get("lat_us"):
                d["pp_MBps"] = d["size"] / d["lat_us"]
            data.setdefault((st, d["size"]), []).append(d)
    sizes = sorted({s for (_, s) in data})

    def cell(st, size, key):
        v = [d[key] for d in data.get((st, size), []) if d.get(key) is not None]
        return (statistics.median(v), min(v), max(v), len(v)) if v else None

    def fmt(t):
        if t is None:
            return "—"
        m, lo, hi, _ = t
        return f"{m:.3g} [{lo:.3g}–{hi:.3g}]" if m < 100 else f"{m:.0f} [{lo:.0f}–{hi:.0f}]"

    others = ([] if a.subjects == "none" else a.subjects.split(",")) if a.subjects else [s for s in stacks if s not in peers]
    runs = max((len(v) for v in data.values()), default=0)
    print(f"runs per stack and size: up to {runs}\n")
    head = ["size", "figure"] + stacks + [f"{s} / best peer" for s in others] + a.vs + [
        f"{v.split('/')[0]} over {v.split('/')[1]}" for v in a.over]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for s in sizes:
        for key in figures:
            label, lower = LABELS.get(key, (key, False))
            cells = {st: cell(st, s, key) for st in stacks}
            pv = [cells[p][0] for p in peers if cells[p]]
            best = (min(pv) if lower else max(pv)) if pv else None
            row = [str(s), label] + [fmt(cells[st]) for st in stacks]
            for st in others:
                row.append(f"{cells[st][0] / best:.2f}×" if cells[st] and best else "—")
            for v in a.vs:
                x, y = v.split("/")
                row.append(f"{cells[x][0] / cells[y][0]:.2f}×" if cells.get(x) and cells.get(y) else "—")
            for v in a.over:
                x, y = v.split("/")
                row.append(overhead(cells.get(x), cells.get(y), lower))
            print("| " + " | ".join(row) + " |")
    if a.rounds:
        per_round(a, data, sizes, stacks, peers, others, figures)


def overhead(x, y, lower):
    """x's cost over y from their medians: +µs and +% for a latency, -% for a throughput."""
    if not x or not y:
        return "—"
    if lower:
        return f"{x[0] - y[0]:+.2f} µs ({(x[0] / y[0] - 1) * 100:+.0f} %)"
    return f"{(x[0] / y[0] - 1) * 100:+.0f} %"


def num(x):
    return "—" if x is None else f"{x:.3g}" if x < 100 else f"{x:.0f}"


def per_round(a, data, sizes, stacks, peers, others, figures):
    """Each round's figures and ratios: stacks that ran fewer rounds (a failed run) are left
    out of that size, as their lines no longer line up with the rounds."""
    for s in sizes:
        counts = {st: len(data.get((st, s), [])) for st in stacks}
        n = max(counts.values(), default=0)
        cols = [st for st in stacks if counts[st] == n]
        gone = [st for st in stacks if 0 < counts[st] < n]
        for key in figures:
            label, lower = LABELS.get(key, (key, False))
            if not any(data[(st, s)][0].get(key) is not None for st in cols):
                continue
            print(f"\nsize {s}, {label}, per round" + (f" (left out, fewer runs: {', '.join(gone)})" if gone else "") + "\n")
            head = ["round"] + cols + [f"{x} / best peer" for x in others] + a.vs
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for r in range(n):
                v = {st: data[(st, s)][r].get(key) for st in cols}
                pv = [v[p] for p in peers if v.get(p) is not None]
                best = (min(pv) if lower else max(pv)) if pv else None
                row = [str(r + 1)] + [num(v[st]) for st in cols]
                for x in others:
                    row.append(f"{v[x] / best:.2f}×" if v.get(x) and best else "—")
                for vs in a.vs:
                    x, y = vs.split("/")
                    row.append(f"{v[x] / v[y]:.2f}×" if v.get(x) and v.get(y) else "—")
                print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
