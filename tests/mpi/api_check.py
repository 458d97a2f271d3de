#!/usr/bin/env python3
"""Checks Sluice's MPI C interface against a function list of the standard: MPI-3.1's
(mpi31_functions.txt), or with --standard MPI-4.0 what MPI-4.0 added (mpi40_functions.txt).

  api_check.py --header include/mpi.h --list tests/mpi/mpi31_functions.txt \
               [--standard MPI-3.1] [--shared build/lib/libmpi.so] [--static build/lib/libmpi.a]
      Fails (exit 1), naming them, on:
        - a listed function (neither excluded nor known-missing) that mpi.h does not declare
          or a library does not define;
        - an MPI_ function mpi.h declares without its PMPI_ twin of the same parameters;
        - a library function MPI_X that is not weak or has no strong PMPI_X (a profiling
          library must be able to replace MPI_X and reach the implementation as PMPI_X);
        - a known-missing function that is now there (drop its tag: the list and
          docs/MPI.md must say what exists).
      Reports, without failing, the known-missing and the excluded functions.
  api_check.py --header include/mpi.h --update-header
      Rewrites mpi.h's PMPI_ block from its MPI_ prototypes (run after adding one).
"""
import argparse
import re
import subprocess
import sys

PMPI_BEGIN = "/* ---- PMPI_ prototypes"
PMPI_END = "/* ---- end of the PMPI_ prototypes"
# Return types of the C bindings.
DECL = re.compile(r"(?<!typedef )\b(int|double|MPI_[A-Z][a-z]+)\s+(P?MPIX?_\w+)\s*\(([^;{]*?)\)\s*;", re.S)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))


def normalize(params):
    return re.sub(r"\s*([*,()\[\]])\s*", r"\1", re.sub(r"\s+", " ", params.strip()))


def header_declarations(text):
    """{name: (return type, normalized parameters)} of every MPI_/PMPI_/MPIX_ prototype."""
    return {m.group(2): (m.group(1), normalize(m.group(3)))
            for m in DECL.finditer(strip_comments(text))}


def read_list(path):
    """{name: status}, status 'required', 'known-missing' or 'excluded:<why>'."""
    entries = {}
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        name, status = fields[0], (fields[1] if len(fields) > 1 else "required")
        if not re.fullmatch(r"MPI_\w+", name) or not (
                status in ("required", "known-missing") or status.startswith("excluded:")):
            sys.exit(f"{path}:{n}: cannot read '{line}'")
        if name in entries:
            sys.exit(f"{path}:{n}: {name} listed twice")
        entries[name] = status
    return entries


def library_symbols(path, static):
    """{name: binding letter from nm ('T' strong, 'W' weak, ...)} of the defined functions."""
    cmd = ["nm", "--defined-only"] + ([] if static else ["-D"]) + [path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "TtWiV" and re.match(r"P?MPIX?_", fields[2]):
            symbols[fields[2].split("@")[0]] = fields[1]
    return symbols


def update_header(path):
    text = open(path).read()
    begin, end = text.find(PMPI_BEGIN), text.find(PMPI_END)
    if begin < 0 or end < 0:
        sys.exit(f"{path}: no '{PMPI_BEGIN}' ... '{PMPI_END}' block")
    end = text.index("\n", end) + 1
    decls = header_declarations(text[:begin])
    block = [PMPI_BEGIN + " (MPI-3.1 §14.2): the same functions under their profiling names.",
             "   Generated from the MPI_ prototypes above by tests/mpi/api_check.py --update-header;",
             "   do not edit. */"]
    for name, (ret, params) in decls.items():
        if name.startswith("MPI_"):
            block.append(f"{ret} P{name}({params.replace(',', ', ')});")
    block.append(PMPI_END + " */\n")
    text = text[:begin] + "\n".join(block) + text[end:]
    open(path, "w").write(text)
    # One prototype a line above; clang-format wraps them as the rest of the header.
    subprocess.run(["clang-format", "-i", path], check=True)
    print(f"{path}: {sum(1 for n in decls if n.startswith('MPI_'))} PMPI_ prototypes")


def check(args):
    problems, notes = [], []
    decls = header_declarations(open(args.header).read())
    listed = read_list(args.list)

    for name, (ret, params) in decls.items():
        if not name.startswith("MPI_"):
            continue
        twin = decls.get("P" + name)
        if twin is None:
            problems.append(f"mpi.h: P{name} not declared (api_check.py --update-header)")
        elif twin != (ret, params):
            problems.append(f"mpi.h: P{name} differs from {name} (api_check.py --update-header)")

    libraries = []
    if args.shared:
        libraries.append(("libmpi.so", library_symbols(args.shared, static=False)))
    if args.static:
        libraries.append(("libmpi.a", library_symbols(args.static, static=True)))
    for lib, syms in libraries:
        for name, kind in sorted(syms.items()):
            if not name.startswith("MPI_"):
                continue
            if kind != "W":
                problems.append(f"{lib}: {name} is not weak (#pragma weak {name} = P{name})")
            if syms.get("P" + name) not in ("T", "i"):
                problems.append(f"{lib}: {name} has no strong P{name}")
        for name in decls:
            if name.startswith(("MPI_", "PMPI_")) and name not in syms:
                problems.append(f"{lib}: {name} declared in mpi.h but not defined")

    def present(name):
        return name in decls and all(name in syms for _, syms in libraries)

    missing, stale, known, excluded_present = [], [], [], []
    for name, status in listed.items():
        if status == "required" and not present(name):
            where = ["mpi.h"] if name not in decls else []
            where += [lib for lib, syms in libraries if name not in syms]
            missing.append(f"{name} (not in {', '.join(where)})")
        elif status == "known-missing":
            (stale if present(name) else known).append(name)
        elif status.startswith("excluded:") and name in decls:
            excluded_present.append(name)
    problems += [f"missing {args.standard} function: {m}" for m in missing]
    problems += [f"{n} is implemented now: drop its known-missing tag in {args.list} "
                 "and its mention in docs/MPI.md" for n in stale]

    by_reason = {}
    for name, status in listed.items():
        if status.startswith("excluded:"):
            by_reason.setdefault(status[len("excluded:"):], []).append(name)
    required = sum(1 for s in listed.values() if s == "required")
    print(f"{args.standard} functions listed: {len(listed)}; required and present: {required - len(missing)}"
          f"; known missing: {len(known)}; excluded: "
          + ", ".join(f"{len(v)} ({k})" for k, v in by_reason.items()))
    if known:
        print("known missing (tolerated, see docs/MPI.md):\n  " + "\n  ".join(known))
    if excluded_present:
        print("excluded but declared: " + " ".join(excluded_present))
    beyond = sorted(n for n in decls if n.startswith("MPI_") and n not in listed)
    notes.append(f"declared beyond this list: {len(beyond)}")
    for note in notes:
        print(note)
    if problems:
        print("\n".join(f"FAIL: {p}" for p in problems))
        return 1
    print("api_check: ok")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--header", required=True)
    p.add_argument("--list")
    p.add_argument("--standard", default="MPI-3.1", help="the list's standard, for the messages")
    p.add_argument("--shared")
    p.add_argument("--static")
    p.add_argument("--update-header", action="store_true")
    args = p.parse_args()
    if args.update_header:
        update_header(args.header)
        return 0
    if not args.list:
        p.error("--list is required")
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
