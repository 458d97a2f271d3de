#!/usr/bin/env python3
"""Fails on an #include that crosses a layer upward.

Usage: tools/check-layers.py [ROOT]   (ROOT: a source tree, default this repository)

The layers, bottom-up (docs/DESIGN.md): util < mem < drivers < proto < core < coll <
boot < api < mpi < tools. A file under src/<layer>/ may include headers of its own layer
and of the layers below it. The public headers belong to the layer that implements them
(sluice/errc.hpp: util, sluice/sluice.hpp and sluice/rma.hpp: core, sluice/collectives.hpp:
coll, mpi.h: mpi), and include/ may include only public headers. tools/ use only the public headers,
except the launcher (sluicerun, the server half of the bootstrap; see LAUNCHER below).
tests/ may include anything.

The build enforces the same order for src/ (each layer's include path holds only itself
and what it links); this check also covers relative includes, public headers and tools,
and runs without a build. Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

LAYERS = ["util", "mem", "drivers", "proto", "core", "coll", "boot", "api", "mpi"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Public headers (include/) and the layer that implements each.
PUBLIC = {
    "sluice/errc.hpp": "util",
    "sluice/sluice.hpp": "core",
    "sluice/collectives.hpp": "coll",
    "sluice/introspect.hpp": "core",
    "sluice/rma.hpp": "core",
    "mpi.h": "mpi",
}

# sluicerun is the launcher: the server half of the bootstrap protocol (wire format, the
# variables it sets for each rank, the one owning-fd type), it binds ranks with coll's
# placement and counts its store's connections in a statistics registry (so --stats json
# prints the ranks' format). These headers are its contract with the library, not a
# shortcut past the API.
LAUNCHER = {
    "tools/sluicerun": {
        "boot/boot_wire.hpp",
        "core/boot_client.hpp",
        "coll/placement.hpp",
        "util/unique_fd.hpp",
        "util/stats.hpp",
    },
}

# Tools that may still reach into src/ (none today: sluice-info and sluice-demo use the
# public introspection API, include/sluice/introspect.hpp). An entry is a (file, include)
# pair with a comment saying what public API will replace it.
TOOLS_ALLOWLIST = {
    # regcost times a memory domain's register/deregister directly; a public introspection
    # call for the domains' cost (sluice-info --protocols) will replace it.
    ("tools/sluice-bench/regcost.cpp", "mem/uring_domain.hpp"),
    # sluice-tune times the uring domain the same way (and under the process-wide
    # registration emulation), fits the cost model and writes its profile: the same public
    # call for the domains' cost, and a public cost-model type, would replace these.
    ("tools/sluice-tune/main.cpp", "mem/uring_domain.hpp"),
    ("tools/sluice-tune/main.cpp", "mem/reg_emulation.hpp"),
    ("tools/sluice-tune/main.cpp", "proto/cost_model.hpp"),
}

SOURCE_EXT = (".c", ".cc", ".cpp", ".h", ".hpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of_src_path(rel):
    """'src/core/x.hpp' -> 'core'; None when not under src/<layer>/."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == "src":
        return parts[1]
    return None


def resolve(root, including_rel, quote, target):
    """The repository-relative path an include names, or None for a system header."""
    here = os.path.dirname(including_rel)
    if quote == '"':
        local = os.path.normpath(os.path.join(here, target))
        if os.path.isfile(os.path.join(root, local)):
            return local
    if target in PUBLIC or os.path.isfile(os.path.join(root, "include", target)):
        return "include/" + target
    first = target.split("/")[0]
    if first in RANK and os.path.exists(os.path.join(root, "src", first)):
        return "src/" + target
    return None  # a system or third-party header


def owner_layer(resolved):
    """The layer a resolved include belongs to (public headers: their implementer)."""
    if resolved.startswith("include/"):
        name = resolved[len("include/"):]
        return PUBLIC.get(name, "unknown public header " + name)
    return layer_of_src_path(resolved)


def check_file(root, rel, problems):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    top = rel.split("/")[0]
    for number, line in enumerate(lines, 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        quote, target = m.group(1), m.group(2)
        resolved = resolve(root, rel, quote, target)
        if resolved is None:
            continue
        where = "%s:%d: #include %s%s%s" % (rel, number, quote, target,
                                            '"' if quote == '"' else ">")
        owner = owner_layer(resolved)
        if top == "src":
            mine = layer_of_src_path(rel)
            if mine not in RANK:
                problems.append("%s: src/%s is not a known layer (add it to LAYERS)" %
                                (where, mine))
                continue
            if owner not in RANK:
                problems.append("%s: %s" % (where, owner))
            elif RANK[owner] > RANK[mine]:
                problems.append("%s: %s (layer %s) includes layer %s, which is above it" %
                                (where, rel, mine, owner))
        elif top == "include":
            if not resolved.startswith("include/"):
                problems.append("%s: a public header includes %s, which is not public" %
                                (where, resolved))
        elif top == "tools":
            if resolved.startswith("include/"):
                continue
            if resolved.startswith("tools/"):
                # Its own folder only: tools do not share internals with each other.
                if resolved.split("/")[1] == rel.split("/")[1]:
                    continue
                problems.append("%s: a tool includes another tool's file" % where)
                continue
            tool_dir = "/".join(rel.split("/")[:2])
            if target in LAUNCHER.get(tool_dir, ()):
                continue
            if (rel, target) in TOOLS_ALLOWLIST:
                continue
            problems.append("%s: tools use only the public headers (include/), not %s" %
                            (where, resolved))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    checked = 0
    for top in ("src", "include", "tools"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXT):
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    check_file(root, rel, problems)
                    checked += 1
    for p in problems:
        print(p)
    if problems:
        print("check-layers: %d include(s) cross a layer upward (order: %s < tools)" %
              (len(problems), " < ".join(LAYERS)))
        return 1
    if checked == 0:
        print("check-layers: no source file under %s" % root)
        return 1
    print("check-layers: %d files, no include crosses a layer upward" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
