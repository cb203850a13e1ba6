#!/usr/bin/env python3
"""Converts a Standard Task Graph Set .stg file to a tactus YAML graph the way bench/stg_bench.cpp builds it.

usage: stg_to_yaml.py FILE.stg PROCESSORS > graph.yaml
One client, one hyperepoch, one epoch with a long period (1000 s, the longest duration allowed), P CPUs;
each task a runnable with WCET = processing time x 1 ms on [CPU]; the dummy entry and exit tasks left out.
"""
import sys


def read_stg(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith('#'):
                break
            if line.strip():
                rows.append(line.split())
    n = int(rows[0][0])
    tasks = [None] * (n + 2)
    for r in rows[1:n + 3]:
        tid, t, npred = int(r[0]), int(r[1]), int(r[2])
        tasks[tid] = (t, [int(p) for p in r[3:3 + npred]])
    return n, tasks


def main():
    n, tasks = read_stg(sys.argv[1])
    p = int(sys.argv[2])
    out = ["Version: 3.0.0", "stg:", "  Identifier: 1", "  Resources:",
           "    CPU: [" + ", ".join("CPU%d" % i for i in range(p)) + "]",
           "  Hyperepochs:", "    - stg:", "        Epochs:", "          - graph: {Period: 1000s}",
           "  Clients:", "    - stg:", "        Epochs:", "          - stg.graph:", "              Runnables:"]
    for i in range(1, n + 1):
        t, preds = tasks[i]
        deps = sorted(set(q for q in preds if 1 <= q <= n))
        out.append("                - T%d:" % i)
        out.append("                    WCET: %dms" % t)
        out.append("                    Resources: [CPU]")
        if deps:
            out.append("                    Dependencies: [" + ", ".join("stg.T%d" % q for q in deps) + "]")
    print("\n".join(out))


main()
