#!/usr/bin/env python3
"""The clock's safety margin, measured: the GTP round trip of a trivial command, and
the wall time of `genmove` (as a GUI sees it, pipes included) when only a little time
is left. Usage: scripts/clock_margin.py [BINARY] (default target/release/thorbook)."""
import subprocess, time, sys, statistics
exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/thorbook"
p = subprocess.Popen([exe, "gtp", "--no-book", "--no-ponder"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def cmd(c):
    p.stdin.write(c + "\n"); p.stdin.flush()
    out = []
    while True:
        l = p.stdout.readline()
        if l.strip() == "" and out: break
        if l.strip(): out.append(l.strip())
    return out
# round trip of a trivial command
cmd("name"); rt = []
for _ in range(500):
    t = time.perf_counter(); cmd("name"); rt.append(time.perf_counter() - t)
print(f"GTP round trip (name), 500 commands: median {statistics.median(rt)*1e3:.3f} ms, max {max(rt)*1e3:.3f} ms")
openings = ["f5d6c3d3c4f4f6f3e6e7", "f5f6e6f4e3c5c4e7c6e2", "f5d6c5f4e3f6d3f3e6", "f5f4e3f6d3c5d6e6f3c4"]
worst = {}
for left in [0.05, 0.1, 0.2, 0.5, 1.0]:
    ratios = []
    for o in openings:
        for extra in range(0, 40, 8):
            cmd("clear_board"); cmd("time_settings 60 0 0")
            moves = [o[i:i+2] for i in range(0, len(o), 2)]
            color = "b"
            ok = True
            for m in moves:
                r = cmd(f"play {color} {m}"); color = "w" if color == "b" else "b"
            # play some engine moves quickly to reach various phases
            for _ in range(extra):
                cmd(f"time_left {color} 1 0")
                r = cmd(f"genmove {color}"); color = "w" if color == "b" else "b"
            cmd(f"time_left {color} {left} 0")
            t = time.perf_counter(); r = cmd(f"genmove {color}"); w = time.perf_counter() - t
            ratios.append(w)
    print(f"time_left {left:.2f} s: {len(ratios)} moves, wall time of genmove median {statistics.median(ratios)*1e3:.1f} ms, max {max(ratios)*1e3:.1f} ms ({max(ratios)/left*100:.0f}% of what was left)")
cmd("quit")
