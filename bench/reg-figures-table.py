#!/usr/bin/env python3
"""Markdown tables from bench/reg-figures.sh's results (OUT, default docs/data/reg-figures):
regcost's fit, first touch per strategy, the copy protocols ([NewMadeleine] figure 6), the
model's predicted vs measured times with the largest error per protocol, the IS-style run per
strategy, and the 100 Gb/s NIC prediction. Every table names the registration cost it ran with
and the load average when it started (a figure measured with a load above ~1 is "loaded").

    bench/reg-figures-table.py [OUT]
"""
import json
import os
import sys
from collections import defaultdict

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data", "reg-figures")


def lines(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = []
        for l in f:
            if l.startswith("{"):
                try:
                    rows.append(json.loads(l))
                except json.JSONDecodeError:  # a job cut short mid-line
                    print(f"({name}: skipped a truncated line)", file=sys.stderr)
        return rows


def human(z):
    z = int(z)
    if z >= 1 << 20 and z % (1 << 20) == 0:
        return f"{z >> 20}M"
    if z >= 1024 and z % 1024 == 0:
        return f"{z >> 10}K"
    return str(z)


def emu_label(e):
    return "real registration cost" if e == "off" else f"registration emulated {e} (EMULATED)"


def loads(rows):
    ls = sorted({float(r["load"]) for r in rows if "load" in r})
    return f"load {ls[0]:.1f}-{ls[-1]:.1f}" if ls else "load ?"


def groups(rows):
    g = defaultdict(list)
    for r in rows:
        g[(r.get("drv"), r.get("emu"))].append(r)
    return sorted(g.items(), key=lambda kv: (kv[0][0], kv[0][1] != "off"))


# regcost
for r in lines("regcost.jsonl"):
    if "lambda_reg_us" in r:
        print(f"**regcost ({r['reg_emulate']})**: λ_reg = {r['lambda_reg_us']:.3f} µs, "
              f"B_reg = {r['B_reg_MBps'] / 1000:.1f} GB/s ({r['ns_per_page']:.1f} ns per 4 KiB "
              f"page); with the release {r['lambda_regdereg_us']:.3f} µs, "
              f"{r['B_regdereg_MBps'] / 1000:.1f} GB/s ({r['regdereg_ns_per_page']:.1f} ns per page)\n")

# first touch
for (drv, emu), rows in groups(lines("firsttouch.jsonl")):
    data = [r for r in rows if "strategy" in r]
    strategies = list(dict.fromkeys(r["strategy"] for r in data))
    sizes = sorted({r["size"] for r in data})
    print(f"**firsttouch over {drv}, {emu_label(emu)}, {loads(rows)}: first-touch bandwidth / "
          f"best (first MB/s / best MB/s)**\n")
    print("| size | " + " | ".join(strategies) + " |")
    print("|---" * (len(strategies) + 1) + "|")
    by = {(r["strategy"], r["size"]): r for r in data}
    for z in sizes:
        cells = []
        for s in strategies:
            r = by.get((s, z))
            cells.append(f"{r['first_MBps'] / r['best_MBps']:.2f} ({r['first_MBps']:.0f}/"
                         f"{r['best_MBps']:.0f})" if r and r["best_MBps"] > 0 else "-")
        print(f"| {human(z)} | " + " | ".join(cells) + " |")
    print()

# pipeline (figure 6)
for (drv, emu), rows in groups(lines("pipeline.jsonl")):
    data = [r for r in rows if "copy_us" in r]
    print(f"**pipeline over {drv}, {emu_label(emu)}, {loads(rows)}: bandwidth MB/s (median half "
          f"round trip)**\n")
    print("| size | copy | register | pipeline (best chunk) | superpipeline | superpipeline / best other |")
    print("|---|---|---|---|---|---|")
    for r in sorted(data, key=lambda r: r["size"]):
        z = r["size"]
        bw = {k: z / r[k + "_us"] for k in ("copy", "register", "pipeline", "superpipeline")}
        other = max(bw["copy"], bw["register"], bw["pipeline"])
        print(f"| {human(z)} | {bw['copy']:.0f} | {bw['register']:.0f} | {bw['pipeline']:.0f} "
              f"({human(r['pipeline_chunk'])}) | {bw['superpipeline']:.0f} | "
              f"{bw['superpipeline'] / other:.2f} |")
    print()

# model
for (drv, emu), rows in groups(lines("model.jsonl")):
    data = [r for r in rows if "measured_us" in r]
    head = next((r for r in rows if "c0" in r), {})
    protocols = list(dict.fromkeys(r["protocol"] for r in data))
    sizes = sorted({r["size"] for r in data})
    print(f"**model over {drv}, {emu_label(emu)}, {loads(rows)}: measured / predicted µs (error); "
          f"profile C_0 {head.get('c0', '?')} B, q {head.get('q', '?')}, pipeline chunk "
          f"{head.get('pipeline_chunk', '?')} B**\n")
    print("| size | " + " | ".join(protocols) + " |")
    print("|---" * (len(protocols) + 1) + "|")
    by = {(r["protocol"], r["size"]): r for r in data}
    for z in sizes:
        cells = []
        for p in protocols:
            r = by.get((p, z))
            cells.append(f"{r['measured_us']:.0f} / {r['predicted_us']:.0f} "
                         f"({100 * r['error']:+.0f} %)" if r else "-")
        print(f"| {human(z)} | " + " | ".join(cells) + " |")
    worst = []
    for p in protocols:
        small = [abs(by[(p, z)]["error"]) for z in sizes if (p, z) in by and z <= 2 << 20]
        large = [abs(by[(p, z)]["error"]) for z in sizes if (p, z) in by and z > 2 << 20]
        worst.append(f"{p} {100 * max(small, default=0):.0f} % / {100 * max(large, default=0):.0f} %")
    print("\nlargest |error| up to 2 MiB / above: " + ", ".join(worst) + "\n")

# IS
for (drv, emu), rows in groups(lines("is.jsonl")):
    data = [r for r in rows if "strategy" in r]
    head = next((r for r in rows if "ranks" in r), {})
    print(f"**is over {drv}, {emu_label(emu)}, {loads(rows)}: {head.get('ranks', '?')} ranks, "
          f"buffers {head.get('pattern', '?')} reused**\n")
    print("| strategy | keys | ms per iteration | Mkeys/s | cache hit rate | adaptive chose |")
    print("|---|---|---|---|---|---|")
    for r in data:
        print(f"| {r['strategy']} | {human(r['key_bytes'])} B | {r['ms_per_iter']:.2f} | "
              f"{r['Mkeys_per_s']:.1f} | {r['hit_rate']:.2f} | {r['adaptive'] or '-'} |")
    print()

# the NIC
for emu in ("off", "68,200"):
    path = os.path.join(out, f"nic100-{emu}.md")
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        print(f"**100 Gb/s NIC predicted, registration {'as measured by sluice-tune' if emu == 'off' else 'emulated 68,200 (EMULATED)'}**\n")
        # sluice-tune's "# ..." header lines as a note, its table as is
        notes = [l[2:] for l in text.splitlines() if l.startswith("# ")]
        rows = [l for l in text.splitlines() if l.startswith("|")]
        print("\n".join(rows) + "\n")
        print("(" + "; ".join(notes) + ")\n")
