import sys, subprocess, re, statistics, collections
f = sys.argv[1]
out = subprocess.run(["perf", "script", "-i", f, "-F", "comm,pid,time,event,trace", "--ns"], capture_output=True, text=True).stdout
ent = {}
d = collections.defaultdict(list)      # send durations per pid
gap = collections.defaultdict(list)    # from successful recv exit to sendto enter
lastrecv = {}
rx_ok = collections.Counter(); rx_fail = collections.Counter(); sends = collections.Counter()
for line in out.splitlines():
    m = re.match(r'\s*(\S+)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)', line)
    if not m: continue
    comm, pid, t, ev, tr = m.groups(); t = float(t)
    if comm not in ("base", "raw_pingpong", "new", "old") and not comm.startswith("v"): continue
    if 'sys_enter_sendto' in ev:
        ent[pid] = t; sends[pid] += 1
        if pid in lastrecv: gap[pid].append(t - lastrecv.pop(pid))
    elif 'sys_exit_sendto' in ev and pid in ent:
        d[pid].append(t - ent.pop(pid))
    elif 'sys_exit_recv' in ev:
        r = int(re.search(r'0x([0-9a-f]+)', tr).group(1), 16) if '0x' in tr else 0
        if r & (1 << 63) or r > (1 << 40): rx_fail[pid] += 1
        else:
            rx_ok[pid] += 1; lastrecv[pid] = t
for pid in d:
    xs = d[pid][1000:]; g = gap[pid][1000:]
    print(f"{f} pid {pid}: sends {sends[pid]} send median {statistics.median(xs)*1e6:.2f} us p25 {sorted(xs)[len(xs)//4]*1e6:.2f}; recv->send median {statistics.median(g)*1e6 if g else 0:.2f} us; rx ok {rx_ok[pid]} fail {rx_fail[pid]}")
