#!/usr/bin/env python3
"""stg_gen.py: random layered task graphs of the STG kind, larger than STG-50, for stg-bench.

usage: bench/stg_gen.py OUT_DIR [--graphs N] [--tasks 100,200,300] [--seed S]

Writes OUT_DIR/graphs/gNNNN.stg (the Standard Task Graph Set's format: n, then n+2 lines
`id time npred preds...` from a dummy entry 0 to a dummy exit n+1) and, for P = 2, 4, 8, 16,
OUT_DIR/optimal/Case50_P_OPT.csv (the file name stg-bench reads) with one row per graph. No
optimum is known for these graphs: a row is `LOW,HIGH` (an open row) with LOW the simple lower
bound max(critical path, ceil(work / P)) and HIGH the length of the classic reference list
schedule (HLFET: highest bottom level first, each task on the processor free first), or just the
length where HLFET reaches LOW (then it is the optimum). stg-bench's "against the reference"
line then says how often the search is at or below HLFET, its ratios are to LOW, and its
"proven" column counts the schedules its own lower bound proves optimal.

Shape (as the STG's layered generator): the tasks fall into random layers (width 1 to 2 x the
mean width sqrt(n)), each task of a later layer has 1 to 4 predecessors drawn mostly from the
layer just before and sometimes from any earlier one; processing times uniform in 1..10.
Same arguments, same files.
"""
import argparse
import math
import os
import random


def make_graph(rng, n):
    layers, left = [], n
    mean = max(1, int(math.sqrt(n)))
    while left > 0:
        w = min(left, rng.randint(1, 2 * mean))
        layers.append(w)
        left -= w
    ids, first = [], 1
    for w in layers:
        ids.append(list(range(first, first + w)))
        first += w
    time = {i: rng.randint(1, 10) for i in range(1, n + 1)}
    preds = {i: [] for i in range(1, n + 2)}
    for li in range(1, len(ids)):
        earlier = [t for layer in ids[:li] for t in layer]
        for t in ids[li]:
            k = rng.randint(1, 4)
            chosen = set()
            for _ in range(k):
                pool = ids[li - 1] if rng.random() < 0.7 else earlier
                chosen.add(rng.choice(pool))
            preds[t] = sorted(chosen)
    for t in ids[0]:
        preds[t] = [0]
    succ = {p for ps in preds.values() for p in ps}
    preds[n + 1] = [t for t in range(1, n + 1) if t not in succ]
    return time, preds


def bound(n, time, preds, p):
    finish = {0: 0}
    for t in range(1, n + 1):
        finish[t] = max(finish[q] for q in preds[t]) + time[t]
    cp = max(finish[t] for t in range(1, n + 1))
    return max(cp, -(-sum(time.values()) // p))


def hlfet(n, time, preds, p):
    succs = {t: [] for t in range(0, n + 2)}
    for t, ps in preds.items():
        for q in ps:
            succs[q].append(t)
    level = {}
    for t in range(n + 1, -1, -1):
        level[t] = time.get(t, 0) + max((level[s] for s in succs[t]), default=0)
    waiting = {t: len(preds[t]) for t in range(1, n + 2)}
    ready = [t for t in range(1, n + 1) if preds[t] == [0]]
    free, finish, done = [0] * p, {0: 0}, 0
    while ready:
        ready.sort(key=lambda t: (-level[t], t))
        t = ready.pop(0)
        k = min(range(p), key=lambda i: free[i])
        start = max(free[k], max(finish[q] for q in preds[t]))
        finish[t] = free[k] = start + time[t]
        done = max(done, finish[t])
        for s in succs[t]:
            waiting[s] -= 1
            if waiting[s] == 0 and s <= n:
                ready.append(s)
    return done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--graphs", type=int, default=60)
    ap.add_argument("--tasks", default="100,200,300")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sizes = [int(x) for x in a.tasks.split(",")]
    os.makedirs(os.path.join(a.out, "graphs"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "optimal"), exist_ok=True)
    rows = {p: [] for p in (2, 4, 8, 16)}
    for g in range(a.graphs):
        n = sizes[g % len(sizes)]
        time, preds = make_graph(rng, n)
        name = "g%04d.stg" % g
        with open(os.path.join(a.out, "graphs", name), "w") as f:
            f.write("%d\n" % n)
            for t in range(0, n + 2):
                ps = preds.get(t, [])
                f.write("%d %d %d%s\n" % (t, time.get(t, 0), len(ps), "".join(" %d" % q for q in ps)))
        for p in rows:
            low, high = bound(n, time, preds, p), hlfet(n, time, preds, p)
            assert high >= low
            row = "%d" % low if high == low else "%d,%d" % (low, high)
            rows[p].append("%d/%s,%d,%s" % (n, name, p, row))
    for p, lines in rows.items():
        with open(os.path.join(a.out, "optimal", "Case50_%d_OPT.csv" % p), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
