#!/usr/bin/env python3
"""Tables of bench/compare-reg.sh.

    compare-reg-table.py OUTDIR

Reads OUTDIR/reuse.jsonl (sluice-bench reuse --strategies --json lines, tagged with drv and
emu) and prints per driver x emulation x pattern x size every strategy's median time per
message (µs, the median over the job's interleaved rounds) and adaptive's ratio to the best
forced strategy (<= 1.05: within 5 %), with what adaptive chose; then a summary (cells
within 5 %, the worst). Reads OUTDIR/firsttouch.jsonl and prints per driver x emulation x
size each strategy's first-touch and best bandwidth and their ratio (>= 0.9: paper
[NewMadeleine]'s headline). Every table says whether the route registered memory.
"""
import json
import os
import sys

FORCED = ["copy", "register", "cache", "ondemand", "superpipeline", "pipeline"]


def load(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def size_name(z):
    for unit, n in (("M", 1 << 20), ("K", 1 << 10)):
        if z >= n and z % n == 0:
            return f"{z // n}{unit}"
    return str(z)


def main():
    out = sys.argv[1]
    reuse = [r for r in load(os.path.join(out, "reuse.jsonl")) if r.get("bench") == "reuse"]
    cells = {}
    for r in reuse:
        cells.setdefault((r["drv"], r["emu"], r["pattern"], r["size"]), {})[r["strategy"]] = r
    ratios = []
    last = None
    for key in sorted(cells, key=lambda k: (k[0], k[1], ["always", "never", "mixed"].index(k[2]), k[3])):
        drv, emu, pattern, size = key
        c = cells[key]
        if (drv, emu) != last:
            last = (drv, emu)
            regs = {json.dumps(r.get("route_registers")) for r in c.values()}
            print(f"\n## reuse over {drv}, registration emulated: {emu}, route registers: {','.join(sorted(regs))}\n")
            strat = [s for s in FORCED + ["adaptive"]]
            print("| pattern | size | " + " | ".join(strat) + " | best forced | adaptive/best | adaptive chose |")
            print("|---" * (len(strat) + 5) + "|")
        strat = [s for s in FORCED + ["adaptive"]]
        forced = {s: c[s]["us_per_msg"] for s in FORCED if s in c}
        best = min(forced, key=forced.get) if forced else None
        ratio = c["adaptive"]["us_per_msg"] / forced[best] if best and "adaptive" in c else None
        if ratio is not None:
            ratios.append((ratio, key))
        vals = " | ".join(f"{c[s]['us_per_msg']:.1f}" if s in c else "-" for s in strat)
        chose = c.get("adaptive", {}).get("adaptive", "")
        print(f"| {pattern} | {size_name(size)} | {vals} | {best} | "
              f"{'-' if ratio is None else f'{ratio:.3f}'} | {chose} |")
    if ratios:
        within = sum(1 for r, _ in ratios if r <= 1.05)
        worst = max(ratios)
        print(f"\nadaptive within 5 % of the best forced strategy in {within} of {len(ratios)} cells;"
              f" worst {worst[0]:.3f} ({' '.join(str(x) for x in worst[1][:3])} {size_name(worst[1][3])});"
              f" median ratio {sorted(r for r, _ in ratios)[len(ratios) // 2]:.3f}")

    ft = load(os.path.join(out, "firsttouch.jsonl"))
    heads = {(r["drv"], r["emu"]): r for r in ft if "strategy" not in r}
    pts = {}
    for r in ft:
        if "strategy" in r:
            pts.setdefault((r["drv"], r["emu"], r["size"]), {})[r["strategy"]] = r
    last = None
    for key in sorted(pts):
        drv, emu, size = key
        if (drv, emu) != last:
            last = (drv, emu)
            h = heads.get((drv, emu), {})
            print(f"\n## firsttouch over {drv}, registration emulated: {emu}, route registers: "
                  f"{json.dumps(h.get('route_registers'))} (first/best bandwidth; first MB/s / best MB/s)\n")
            names = list(pts[key].keys())
            print("| size | " + " | ".join(names) + " |")
            print("|---" * (len(names) + 1) + "|")
        p = pts[key]
        print(f"| {size_name(size)} | " + " | ".join(
            f"{p[s]['first_MBps'] / p[s]['best_MBps']:.2f} ({p[s]['first_MBps']:.0f}/{p[s]['best_MBps']:.0f})"
            for s in p) + " |")


if __name__ == "__main__":
    main()
