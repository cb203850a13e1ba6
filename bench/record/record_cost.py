#!/usr/bin/env python3
"""Recording's CPU cost: record_graph.yaml (three clients, three 64 KiB channels at 50 Hz) run
ITERATIONS iterations with and without --record, ROUNDS interleaved rounds. The CPU of the master
and the clients (user + system, from wait4) of each run; the cost is the difference per second
of run, in % of one core. Prints each round and the median; no timed asserts.

usage: bench/record/record_cost.py BUILD SOURCE [ITERATIONS] [ROUNDS]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(build, sched, iterations, record_dir, tag):
    instance = f'reccost_{os.getpid()}_{tag}'
    master_cmd = [f'{build}/master/tactus-master', '-C', '-s', sched, '-e', str(iterations), '-D', instance]
    if record_dir:
        master_cmd += ['--record', record_dir]
    start = time.monotonic()
    procs = [subprocess.Popen(master_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)]
    for client in ('Sensors', 'Fusion', 'Planner'):
        procs.append(subprocess.Popen(
            [f'{build}/tests/runtime/tactus-test-client', '--name', client, '--instance', instance, '--busy-us', '500',
             '--timeout-ms', '20000', '--channel', 'A', '--channel', 'B', '--channel', 'C'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    cpu = 0.0
    for p in procs:
        _pid, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
    wall = time.monotonic() - start
    out = procs[0].stdout.read().decode()
    if any(p.returncode != 0 for p in procs):
        sys.exit(f'a run failed: {[p.returncode for p in procs]}\n{out}')
    return cpu, wall, out


def main():
    build, source = sys.argv[1], sys.argv[2]
    iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work = tempfile.mkdtemp()
    try:
        sched = f'{work}/g.tsched'
        subprocess.run([f'{build}/compiler/tactus-compile', '-q', '-i', f'{source}/bench/record/record_graph.yaml',
                        '-o', sched], check=True, stdout=subprocess.DEVNULL)
        costs = []
        for r in range(rounds):
            plain_cpu, plain_wall, _ = run(build, sched, iterations, None, f'p{r}')
            rec_dir = f'{work}/rec{r}'
            rec_cpu, rec_wall, out = run(build, sched, iterations, rec_dir, f'r{r}')
            size = os.path.getsize(f'{rec_dir}/soc0.trec')
            cost = (rec_cpu - plain_cpu) / rec_wall * 100
            costs.append(cost)
            said = [line for line in out.splitlines() if 'record' in line]
            print(f'round {r + 1}: without --record {plain_cpu:.3f} s CPU in {plain_wall:.2f} s, '
                  f'with {rec_cpu:.3f} s CPU in {rec_wall:.2f} s ({size / 1e6:.1f} MB recorded): '
                  f'cost {cost:.2f}% of one core; {said[-1] if said else "(nothing said)"}')
            shutil.rmtree(rec_dir)
        print(f'recording cost: median {statistics.median(costs):.2f}% of one core '
              f'({rounds} rounds of {iterations} iterations, 3 x 64 KiB at 50 Hz; issue bound 5%)')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
