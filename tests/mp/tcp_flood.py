#!/usr/bin/env python3
"""A stranger floods every rank of a running tcp job (mp_flood) with connections.

    tcp_flood.py SLUICERUN MP_FLOOD [--ranks N] [--large N] [--silent N] [--max-growth-mb M]

Per rank: --large connections that each send one frame header announcing the largest
payload a frame may carry (8 B: payload 512 KiB, upper header 256 B, type data) and never
the rest, then --silent connections that send nothing. None of them has proven the job key,
so the rank must not allocate for them: its VmRSS and VmHWM (/proc/<pid>/status) may grow by
less than --max-growth-mb. Every one of them must be closed by the rank (the large ones at
once, the silent ones by TCP_HANDSHAKE_LIMIT and TCP_HANDSHAKE_TIMEOUT) within a bounded time,
the job's messages stay intact (mp_flood verifies them) and the ranks' statistics count the
rejects (mp_flood checks tcp.unproven.*). Stops early, and fails, as soon as a rank has grown
too much, so that the unfixed driver is shown failing without eating the machine's memory.
"""
import argparse
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


def connect(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(addr)
    return s


def closed_by_peer(s):
    """True once the rank closed the connection (EOF or reset)."""
    p = select.poll()
    p.register(s, select.POLLIN)
    if not p.poll(0):
        return False
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, BlockingIOError):
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluicerun")
    ap.add_argument("program")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--large", type=int, default=1000)
    ap.add_argument("--silent", type=int, default=1000)
    ap.add_argument("--max-growth-mb", type=float, default=10)
    ap.add_argument("--close-seconds", type=float, default=60)
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.ranks * (args.large + args.silent) + 64
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))

    work = tempfile.mkdtemp(prefix="tcp_flood.")
    env = dict(os.environ, SLUICE_DRIVERS="tcp", FLOOD_DIR=work,
               FLOOD_LARGE=str(args.large), FLOOD_SILENT=str(args.silent))
    env.setdefault("SLUICE_TCP_HANDSHAKE_TIMEOUT", "2s")
    job = subprocess.Popen([args.sluicerun, "-n", str(args.ranks), "--timeout", "240",
                            args.program], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    problems = []
    held = []
    try:
        pids, addrs = [], []
        for r in range(args.ranks):
            pids.append(int(wait_for(f"{work}/pid{r}", job, 60)))
            host, port = wait_for(f"{work}/addr{r}", job, 60).rsplit(":", 1)
            addrs.append((host, int(port)))
        base = {p: (status_kb(p, "VmRSS"), status_kb(p, "VmHWM")) for p in pids}
        print("before: " + ", ".join(f"rank {r} pid {p} VmRSS {base[p][0]} kB VmHWM {base[p][1]} kB"
                                   for r, p in enumerate(pids)))
        limit_kb = args.max_growth_mb * 1024

        def growth():
            worst = (float("-inf"), -1, (0, 0))
            for r, p in enumerate(pids):
                rss = status_kb(p, "VmRSS") - base[p][0]
                hwm = status_kb(p, "VmHWM") - base[p][1]
                worst = max(worst, (max(rss, hwm), r, (rss, hwm)))
            return worst

        # The frame header of tcp_wire.hpp: payload_len u32, header_len u16, type u8, flags u8.
        header = struct.pack("<IHBB", 512 * 1024, 256, 1, 0)
        large, silent = [], []
        for kind, count in (("large", args.large), ("silent", args.silent)):
            for i in range(count):
                for r, addr in enumerate(addrs):
                    s = connect(addr)
                    if kind == "large":
                        s.sendall(header)
                        large.append(s)
                    else:
                        silent.append(s)
                    held.append(s)
                if i % 50 == 49:
                    g, r, (rss, hwm) = growth()
                    if g > limit_kb:
                        problems.append(f"after {i + 1} {kind} connections per rank, rank {r} "
                                        f"grew by VmRSS {rss} kB, VmHWM {hwm} kB "
                                        f"(limit {limit_kb:.0f} kB)")
                        raise StopIteration
            print(f"{count} {kind} connections opened to each rank")

        # Every one of them is closed by the ranks, in bounded time.
        end = time.monotonic() + args.close_seconds
        open_large, open_silent = list(large), list(silent)
        while (open_large or open_silent) and time.monotonic() < end:
            open_large = [s for s in open_large if not closed_by_peer(s)]
            open_silent = [s for s in open_silent if not closed_by_peer(s)]
            time.sleep(0.1)
        if open_large or open_silent:
            problems.append(f"after {args.close_seconds} s the ranks still had "
                            f"{len(open_large)} large-header and {len(open_silent)} silent "
                            "connections open")
        g, r, (rss, hwm) = growth()
        print(f"most growth: rank {r}: VmRSS {rss} kB, VmHWM {hwm} kB")
        if g > limit_kb:
            problems.append(f"rank {r} grew by VmRSS {rss} kB, VmHWM {hwm} kB "
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
            out, _ = job.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            job.kill()
            out, _ = job.communicate()
            problems.append("the job did not end within 120 s of the flood")
        shutil.rmtree(work, ignore_errors=True)
    print(out, end="")
    if job.returncode != 0:
        problems.append(f"the job exited with status {job.returncode}")
    oks = sum(1 for line in out.splitlines() if line.startswith("flood: rank") and
              line.endswith(" ok"))
    if oks != args.ranks:
        problems.append(f"{oks} of {args.ranks} ranks reported ok")
    for p in problems:
        print("FAILED: " + p)
    if not problems:
        print(f"PASS: no rank grew by {args.max_growth_mb:g} MB or more, every connection was "
              "closed, results intact")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
