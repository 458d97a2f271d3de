#!/usr/bin/env python3
"""Checks the documentation's links and paths (ctest label `docs`).

For README.md and every docs/**/*.md under ROOT:
  - every relative Markdown link [text](target) and image must name an existing file or
    folder (anchors after '#' are not checked; http(s)/mailto links are not followed);
  - every repository path the text names (src/..., include/..., tools/..., tests/...,
    bench/..., docs/..., cmake/..., in backticks or not) must exist; a path with a wildcard
    or placeholder (*, {a,b}, <name>, ...) must match at least one file; outputs that only a
    build or a benchmark run creates (build*/, bench/results/) are not checked;
  - no path outside the repository: /work/, /tmp/, /home/, ../shared.
Prints one line per problem and "N problems"; exits 1 if there is any.

  check_docs.py [ROOT]        (default: the repository this file is in)
"""
import glob
import os
import re
import sys

ROOTS = ("src", "include", "tools", "tests", "bench", "docs", "cmake")
GENERATED = ("build", "bench/results", "build-peers")
OUTSIDE = re.compile(r"(?<![\w.])(/work/|/tmp/|/home/|\.\./shared)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
PATH = re.compile(r"(?<![\w/.$-])((?:%s)/[\w./*{},<>-]*[\w*}>/])" % "|".join(ROOTS))
FENCE = re.compile(r"^\s*(```|~~~)")


def docs(root):
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [f for f in files if os.path.isfile(f)]


def expand_braces(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(p[: m.start()] + alt + p[m.end():])
    return out


def path_exists(root, p):
    p = p.rstrip(".,;:")
    if any(p == g or p.startswith(g + "/") for g in GENERATED):
        return True
    if "..." in p:
        p = p.split("...")[0]
    for q in expand_braces(p):
        q = re.sub(r"<[^>]*>", "*", q)
        if any(c in q for c in "*?["):
            if not glob.glob(os.path.join(root, q)):
                return False
        elif not os.path.exists(os.path.join(root, q)):
            return False
    return True


def check(root):
    problems = []
    for f in docs(root):
        rel = os.path.relpath(f, root)
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            where = "%s:%d" % (rel, n)
            for m in OUTSIDE.finditer(line):
                problems.append("%s: path outside the repository: %s" % (where, m.group(1)))
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                target = target.split("#")[0]
                if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(f), target))):
                    problems.append("%s: broken link: %s" % (where, target))
            for m in PATH.finditer(line):
                if not path_exists(root, m.group(1)):
                    problems.append("%s: no such path in the repository: %s" % (where, m.group(1)))
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = check(root)
    for p in problems:
        print(p)
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
