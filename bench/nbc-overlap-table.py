#!/usr/bin/env python3
"""Markdown table of bench/nbc-overlap.sh results: per operation, rank count and size, the
overlap of every stack (median over runs, [min-max] when several; one * per run whose t_cpu
missed t_pure by more than 1.5x either way) and the ceiling computed from the measured copy
and compute times (median over runs, of the stack named by --ceiling).

Usage: bench/nbc-overlap-table.py [IN.jsonl] [--ops ialltoall,igather,iscatter]
                                  [--sizes 65536,1048576] [--ranks 2]
                                  [--stacks sluice-on,sluice-off,openmpi,mpich]
                                  [--ceiling sluice-on] [--verdict sluice-on,sluice-off]

With --verdict, a last column judges the overlap target for the best of the named Sluice
stacks (medians): target = better peer + 30 points; "met" when that stack reaches the
target and is within 10 points of the ceiling, "unreachable" when the ceiling itself is
below the target (the stack is then judged against the ceiling - 10 only), else "not met".
"""
import argparse
import json
import statistics

p = argparse.ArgumentParser()
p.add_argument("input", nargs="?", default="bench/results/nbc-overlap.jsonl")
p.add_argument("--ops", default="ialltoall,igather,iscatter")
p.add_argument("--sizes", default="")
p.add_argument("--ranks", default="")
p.add_argument("--stacks", default="sluice-on,sluice-off,openmpi,mpich")
p.add_argument("--ceiling", default="sluice-on")
p.add_argument("--verdict", default="")
a = p.parse_args()

cells = {}
for line in open(a.input):
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    if d.get("bench") != "nbc-overlap":
        continue
    key = (d.get("label") or d.get("impl"), d["op"], d["ranks"], d["size"])
    cells.setdefault(key, []).append(d)

stacks = a.stacks.split(",")
ops = a.ops.split(",")
sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else sorted({k[3] for k in cells})
ranks = [int(r) for r in a.ranks.split(",")] if a.ranks else sorted({k[2] for k in cells})


def size_text(s):
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if s >= n and s % n == 0:
            return f"{s // n} {unit}"
    return f"{s} B"


def fmt(vals, runs=()):
    if not vals:
        return "–"
    v = [x * 100 for x in vals]
    m = statistics.median(v)
    text = f"{m:.0f}" if len(v) == 1 else f"{m:.0f} [{min(v):.0f}–{max(v):.0f}]"
    # A run whose compute did not match t_pure (machine load changed between the phases):
    # its overlap says little.
    off = sum(1 for d in runs if not 0.67 <= d["t_cpu_us"] / max(d["t_pure_us"], 1e-9) <= 1.5)
    return text + ("*" * off)


verdict = [v for v in a.verdict.split(",") if v]


def med(st, op, r, s, field="overlap"):
    runs = cells.get((st, op, r, s), [])
    return statistics.median(d[field] * 100 for d in runs) if runs else None


def judge(op, r, s):
    peers = [m for m in (med("openmpi", op, r, s), med("mpich", op, r, s)) if m is not None]
    ceil = med(a.ceiling, op, r, s, "ceiling")
    mine = [(m, st) for st in verdict if (m := med(st, op, r, s)) is not None]
    if not peers or ceil is None or not mine:
        return "–"
    best, who = max(mine)
    target = min(100, max(peers) + 30)
    if ceil < target:
        ok = best >= ceil - 10
        return (f"unreachable (ceiling {ceil:.0f} < target {target:.0f}); "
                f"{who} {best:.0f} {'within' if ok else 'not within'} 10 of ceiling")
    ok = best >= target and best >= ceil - 10
    return f"{'met' if ok else 'not met'} (target {target:.0f}, {who} {best:.0f})"


extra_head = " | target" if verdict else ""
print("| op | ranks | size | " + " | ".join(stacks) + f" | ceiling ({a.ceiling}){extra_head} |")
print("|---|---|---|" + "---|" * len(stacks) + "---|" + ("---|" if verdict else ""))
for op in ops:
    for r in ranks:
        for s in sizes:
            row = []
            for st in stacks:
                runs = cells.get((st, op, r, s), [])
                row.append(fmt([d["overlap"] for d in runs], runs))
            if all(x == "–" for x in row):
                continue
            ceil = fmt([d["ceiling"] for d in cells.get((a.ceiling, op, r, s), [])])
            tail = f" | {judge(op, r, s)}" if verdict else ""
            print(f"| {op} | {r} | {size_text(s)} | " + " | ".join(row) + f" | {ceil}{tail} |")
