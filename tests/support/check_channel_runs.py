#!/usr/bin/env python3
# Checks an executed run against a schedule's channel plan (format version 6): every reader run
# started after the writer run whose version the schedule maps it to ended, and the writer run
# that next fills the same buffer started after the reader run ended. Prints the reader runs
# checked and the deviations; exits 1 on any.
# With the readers' outputs (tactus-test-client --channel NAME --channel-log), also checks what each
# reader run got from libtactus: the writer run the schedule names (instance and iteration), "no
# version yet" only before the first, and "not written" only where that writer run did not run.
# usage: check_channel_runs.py SCHEDULE.tsched RUNS.csv [CLIENT.out...]
#        (RUNS.csv: tactus-report LOG SCHEDULE --csv)
import csv, sys
from collections import defaultdict
recs = [l.split() for l in open(sys.argv[1]) if l.strip()]
f = lambda r: dict(x.split('=', 1) for x in r[1:] if '=' in x)
clients = {}; epochs = {}; runnables = {}; inst = {}; channels = {}; reads = []; writes = []
for r in recs:
    k = r[0]; d = f(r)
    if k == 'client': clients[d['id']] = d['name']
    elif k == 'epoch': epochs[d['id']] = d
    elif k == 'runnable': runnables[d['id']] = d
    elif k == 'instance': inst[d['id']] = d
    elif k == 'channel': channels[d['id']] = d
    elif k == 'channel_read': reads.append(d)
    elif k == 'channel_write': writes.append(d)
def key(i):
    rn = runnables[inst[i]['runnable']]
    return (clients[rn['client']], rn['name'], int(inst[i]['frame'])), int(epochs[rn['epoch']]['frames'])
runs = {}
for row in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith('tactus-report')):
    runs[(row['client'], row['runnable'], int(row['hyperepoch']), int(row['frame']))] = (int(row['start_ns']), int(row['end_ns']))
def run(i, it):
    (c, n, fr), frames = key(i)
    return runs.get((c, n, it, fr))
iters = max(k[2] for k in runs) + 1
writerOf = {(w['channel'], w['instance']): w for w in writes}
byVersion = {}
for w in writes:
    byVersion[(w['channel'], int(inst[w['instance']]['frame']))] = w['instance']
checked = bad = 0
for rd in reads:
    ch = channels[rd['channel']]; n = int(ch['writes']); depth = int(ch['depth'])
    prev = int(rd['previous']); wframe = int(inst[rd['writer']]['frame'])
    for it in range(iters):
        r = run(rd['instance'], it)
        if r is None: continue
        wit = it - prev
        if wit < 0: continue  # no version yet
        w = run(rd['writer'], wit)
        if w is None: continue
        checked += 1
        if w[1] > r[0]:
            bad += 1; print('reader started before its writer ended', rd, it)
        g = wit * n + wframe + depth  # the next version into the same buffer
        nxt = run(byVersion[(rd['channel'], g % n)], g // n)
        if nxt is not None and nxt[0] < r[1]:
            bad += 1; print('buffer overwritten while read', rd, it)
print(f'{checked} reader runs checked, {bad} deviations')
if len(sys.argv) > 3:
    channelId = {c['name']: i for i, c in channels.items()}
    readOf = {(rd['channel'], rd['instance']): rd for rd in reads}
    seen = mismatched = 0
    for path in sys.argv[3:]:
        for line in open(path):
            if not line.startswith('channel-read '): continue
            d = f(line.split()); seen += 1
            rd = readOf.get((channelId.get(d['channel']), d['instance']))
            it = int(d['iteration'])
            wit = it - int(rd['previous']) if rd else -2
            if rd is None: why = 'no such read in the schedule'
            elif wit < 0: why = '' if d['status'] == 'no-version-yet' else 'expected no version yet'
            elif d['status'] == 'ok': why = '' if (d['writer'], int(d['writer-iteration'])) == (rd['writer'], wit) else 'another writer run'
            elif d['status'] == 'not-written': why = '' if run(rd['writer'], wit) is None else 'not written, but its writer run ran'
            else: why = 'status ' + d['status']
            if why: mismatched += 1; print('reader got', line.strip(), '->', why)
    print(f'{seen} reads by libtactus checked, {mismatched} deviations')
    bad += mismatched
sys.exit(1 if bad else 0)
