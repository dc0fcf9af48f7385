#!/usr/bin/env python3
"""Where a GTP engine's clock goes: a relay between `thorbook match` and the engine
that logs each `genmove`'s wall time (pipes included) with the position's empties,
then a summary of a log by phase.

Relay (as a match's engine command line):
    --a "env GTPLOG=times.log scripts/gtp_move_times.py target/release/thorbook gtp --no-ponder"
Summary of a log (share of a CLOCK-second game per phase, and where each game's
search reached the end: the last move that took 20 ms or more):
    scripts/gtp_move_times.py --summary times.log CLOCK
"""
import collections, os, subprocess, sys, time


def relay(engine):
    log = open(os.environ["GTPLOG"], "a", buffering=1)
    child = subprocess.Popen(engine, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    game, placed = 0, 0
    for line in sys.stdin:
        words = line.split()
        start = time.monotonic()
        child.stdin.write(line)
        child.stdin.flush()
        reply = []
        while True:
            r = child.stdout.readline()
            if not r:
                return
            reply.append(r)
            if r.strip() == "" and len(reply) > 1:
                break
        took = time.monotonic() - start
        sys.stdout.write("".join(reply))
        sys.stdout.flush()
        if not words:
            continue
        if words[0] == "clear_board":
            game, placed = game + 1, 0
        elif words[0] == "play" and len(words) > 2 and words[2].lower() != "pass":
            placed += 1
        elif words[0] == "genmove":
            move = reply[0].strip().lstrip("=").strip().lower()
            log.write(f"{game} {60 - placed} {took:.4f} {move}\n")
            placed += move != "pass"
        elif words[0] == "quit":
            return


def summary(path, clock):
    games = collections.defaultdict(list)
    for line in open(path):
        game, empties, took, _ = line.split()
        games[game].append((int(empties), float(took)))
    phases = [("> 40", 41, 60), ("33-40", 33, 40), ("25-32", 25, 32), ("<= 24", 0, 24)]
    n = len(games)
    for name, lo, hi in phases:
        spent = sum(t for moves in games.values() for e, t in moves if lo <= e <= hi)
        print(f"{name:>6} empties: {100 * spent / n / clock:5.1f}% of the clock")
    used = sum(t for moves in games.values() for _, t in moves) / n
    print(f"used {100 * used / clock:.1f}% over {n} games")
    ends = [min(e for e, t in moves if t >= 0.02) for moves in games.values() if any(t >= 0.02 for _, t in moves)]
    print("last move of 20 ms or more at", sorted(ends), "empties")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--summary":
        summary(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1:
        relay(sys.argv[1:])
    else:
        sys.exit(__doc__)
