#!/usr/bin/env python3
"""A stranger floods the launcher's bootstrap store (TCP, sluicerun --hosts) while a job runs.

    store_flood.py SLUICERUN BOOT_PROBE [--large N] [--silent N] [--partial N]
                   [--max-growth-mb M] [--close-seconds S]

The job (boot_probe store-flood, 2 ranks) exchanges values through the store round after
round, each checked. Meanwhile: --large connections that each send one frame header
announcing a huge payload (put: the largest a rank may send, hello: 4 GiB), --silent ones
that send nothing, and --partial ones that send the header of a hello of the largest size
and half of it. None has proven the job key, so the launcher must not allocate for them:
its VmRSS and VmHWM may grow by less than --max-growth-mb. Every one of them must be closed
by the launcher within --close-seconds (the large ones at once, the others by
--boot-handshake-limit and --boot-handshake-timeout), the job must end with every rank ok,
and the launcher's counters (sluicerun --stats json: one line {"rank":-1,"counters":{...}}
on stderr, read by name) must count them: boot.unproven.rejected >= --large, evicted +
timed_out >= --silent + --partial, and no more waiting at once than the limit. Stops early,
and fails, as soon as the launcher has grown too much.
"""
import argparse
import json
import os
import resource
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HEADER = "<II"  # boot_wire.hpp: u32 type, u32 payload length, little-endian
HELLO, PUT = 1, 2
MAX_PAYLOAD = 4 + 4096 + (1 << 20)  # boot_wire.hpp max_payload_size
MAX_HELLO = 4 + 32 + 256  # boot_wire.hpp max_hello_size


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for pid {pid}")


def wait_for(path, proc, seconds):
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError(f"the job ended (status {proc.returncode}) before {path} appeared")
        if time.monotonic() > end:
            raise RuntimeError(f"{path} did not appear within {seconds} s")
        time.sleep(0.05)
    with open(path) as f:
        return f.read().strip()


def closed_by_peer(s):
    p = select.poll()
    p.register(s, select.POLLIN)
    if not p.poll(0):
        return False
    try:
        return s.recv(4096) == b""  # (a reject frame may come first)
    except (ConnectionResetError, BlockingIOError):
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluicerun")
    ap.add_argument("probe")
    ap.add_argument("--large", type=int, default=1000)
    ap.add_argument("--silent", type=int, default=200)
    ap.add_argument("--partial", type=int, default=200)
    ap.add_argument("--max-growth-mb", type=float, default=10)
    ap.add_argument("--close-seconds", type=float, default=60)
    args = ap.parse_args()
    ranks, limit = 2, 2 + 64  # sluicerun's default --boot-handshake-limit: ranks + 64

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.large + args.silent + args.partial + 64
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, need), hard))

    work = tempfile.mkdtemp(prefix="store_flood.")
    env = dict(os.environ, FLOOD_DIR=work)
    out = open(f"{work}/out", "w+")
    err = open(f"{work}/err", "w+")
    job = subprocess.Popen([args.sluicerun, "-n", str(ranks), "--timeout", "240",
                            "--hosts", "a:1,b:1", "--boot-addr", "127.0.0.1",
                            "--launch", "env PROBE_HOST={host}",
                            "--boot-handshake-timeout", "2", "--stats", "json",
                            args.probe, "store-flood"],
                           env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    problems = []
    held = []
    try:
        host, port = wait_for(f"{work}/addr", job, 60).removeprefix("tcp:").rsplit(":", 1)
        addr = (host, int(port))
        base = (status_kb(job.pid, "VmRSS"), status_kb(job.pid, "VmHWM"))
        print(f"before: launcher pid {job.pid} VmRSS {base[0]} kB VmHWM {base[1]} kB")
        limit_kb = args.max_growth_mb * 1024

        def growth():
            rss = status_kb(job.pid, "VmRSS") - base[0]
            hwm = status_kb(job.pid, "VmHWM") - base[1]
            return max(rss, hwm), rss, hwm

        large_headers = [struct.pack(HEADER, PUT, MAX_PAYLOAD),
                         struct.pack(HEADER, HELLO, 0xFFFFFFFF)]
        partial = struct.pack(HEADER, HELLO, MAX_HELLO) + b"x" * (MAX_HELLO // 2)
        kinds = {"large": [], "silent": [], "partial": []}
        for kind, count in (("large", args.large), ("silent", args.silent),
                            ("partial", args.partial)):
            for i in range(count):
                s = socket.create_connection(addr, timeout=20)
                if kind == "large":
                    s.sendall(large_headers[i % 2])
                elif kind == "partial":
                    s.sendall(partial)
                kinds[kind].append(s)
                held.append(s)
                if i % 50 == 49:
                    g, rss, hwm = growth()
                    if g > limit_kb:
                        problems.append(f"after {i + 1} {kind} connections the launcher grew "
                                        f"by VmRSS {rss} kB, VmHWM {hwm} kB "
                                        f"(limit {limit_kb:.0f} kB)")
                        raise StopIteration
                if job.poll() is not None:
                    raise RuntimeError(f"the job ended (status {job.returncode}) during the flood")
            print(f"{count} {kind} connections opened")

        end = time.monotonic() + args.close_seconds
        still = {k: list(v) for k, v in kinds.items()}
        while any(still.values()) and time.monotonic() < end:
            still = {k: [s for s in v if not closed_by_peer(s)] for k, v in still.items()}
            time.sleep(0.1)
        if any(still.values()):
            problems.append(f"after {args.close_seconds} s the launcher still had open: " +
                            ", ".join(f"{len(v)} {k}" for k, v in still.items()))
        g, rss, hwm = growth()
        print(f"growth: VmRSS {rss} kB, VmHWM {hwm} kB")
        if g > limit_kb:
            problems.append(f"the launcher grew by VmRSS {rss} kB, VmHWM {hwm} kB "
                            f"(limit {limit_kb:.0f} kB)")
    except StopIteration:
        pass
    except Exception as e:  # noqa: BLE001 - any failure of the harness fails the test
        problems.append(f"{type(e).__name__}: {e}")
    finally:
        for s in held:
            s.close()
        open(f"{work}/done", "w").close()
        try:
            job.wait(timeout=120)
        except subprocess.TimeoutExpired:
            job.kill()
            job.wait()
            problems.append("the job did not end within 120 s of the flood")
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        shutil.rmtree(work, ignore_errors=True)
    print("---- stdout ----\n" + stdout + "---- stderr ----\n" + stderr, end="")
    if job.returncode != 0:
        problems.append(f"the job exited with status {job.returncode}")
    oks = sum(1 for line in stdout.splitlines()
              if line.startswith("boot_probe: rank") and " ok after " in line)
    if oks != ranks:
        problems.append(f"{oks} of {ranks} ranks reported ok")
    stats = [line for line in stderr.splitlines() if line.startswith('{"rank":-1,')]
    if len(stats) != 1:
        problems.append(f"{len(stats)} launcher statistics lines (expected 1)")
    else:
        c = json.loads(stats[0])["counters"]
        if c.get("boot.unproven.rejected", 0) < args.large:
            problems.append(f"boot.unproven.rejected = {c.get('boot.unproven.rejected')}, "
                            f"expected >= {args.large}")
        closed_silent = c.get("boot.unproven.evicted", 0) + c.get("boot.unproven.timed_out", 0)
        if closed_silent < args.silent + args.partial:
            problems.append(f"boot.unproven.evicted + timed_out = {closed_silent}, expected >= "
                            f"{args.silent + args.partial}")
        if c.get("boot.unproven.peak", 0) > limit:
            problems.append(f"boot.unproven.peak = {c.get('boot.unproven.peak')} > {limit}")
        if c.get("boot.unproven.accepted", 0) < args.large + args.silent + args.partial + ranks:
            problems.append(f"boot.unproven.accepted = {c.get('boot.unproven.accepted')}")
        print("launcher counters: " + ", ".join(f"{k}={v}" for k, v in c.items()))
    for p in problems:
        print("FAILED: " + p)
    if not problems:
        print(f"PASS: the launcher grew by less than {args.max_growth_mb:g} MB, closed every "
              "connection, counted them, and the job's values were intact")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
