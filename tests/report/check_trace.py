#!/usr/bin/env python3
"""Checks a tactus-report Chrome trace against the Chrome trace event format and against the event
log and schedule it was made from.

usage: check_trace.py TRACE.json SCHEDULE.tsched LOG.tlog

Format: a JSON object with traceEvents; every event has a known phase, a name, integer pid/tid;
timed events a numeric ts; complete events a dur >= 0; instant events a scope g/p/t; metadata
events name processes and threads (every pid/tid used is named); flow events pair up by id, the
start not after the finish, the finish binding to the enclosing slice; async events ("b"/"e") pair
up by cat, id and name, the begin not after the end.

Log and schedule (read here from their bytes and text, not through tactus): one executed event per
kRun record, at the record's start and with its length (one constant offset for all times); named
"OVERRUN Client.Runnable" exactly when it ran longer than the WCET; args planned_start_us, wcet_us
and jitter_us = ts - planned_start_us; in the process of its client, on the thread of its
resource, with the plan event of the same instance and iteration on the thread beside it; the plan
of every iteration the log names; one release instant per kRelease record with its jitter; one
flow arrow per dependency between runs of two clients in the same iteration; each chain occurrence
(cat "chain") from a logged ideal frame release to a logged run end, its measured_us its length,
named "MISS ..." exactly when over its planned_us or required_us. Exit 0 when all hold, 1 with the
first difference.
"""
import collections
import json
import struct
import sys

KIND_RUN, KIND_RELEASE = 1, 2
NONE = 0xFFFFFFFF
PHASES = set("BEXiIsCtfMPOnbeNDRc(") | {"I"}
METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def fail(msg):
    print("check_trace: FAIL: " + msg)
    sys.exit(1)


def read_schedule(path):
    """clients, runnables {id: (name, client, epoch, wcet)}, epochs {id: hyperepoch}, instances
    {id: (runnable, frame, start, end, resources, deps)}, resources {id: name}."""
    clients, runnables, epochs, instances, resources = {}, {}, {}, {}, {}
    for line in open(path):
        words = line.split()
        if not words:
            continue
        f = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        ids = lambda v: [int(x) for x in v.split(",") if x and x != "-"]
        if words[0] == "client":
            clients[int(f["id"])] = f["name"]
        elif words[0] == "resource":
            resources[int(f["id"])] = f["name"]
        elif words[0] == "epoch":
            epochs[int(f["id"])] = int(f["hyperepoch"])
        elif words[0] == "runnable":
            runnables[int(f["id"])] = (f["name"], int(f["client"]), int(f["epoch"]), int(f["wcet_ns"]))
        elif words[0] == "instance":
            instances[int(f["id"])] = (int(f["runnable"]), int(f["frame"]), int(f["start_ns"]), int(f["end_ns"]),
                                       ids(f["resources"]), ids(f.get("deps", "")))
    return clients, runnables, epochs, instances, resources


def read_log(path):
    data = open(path, "rb").read()
    if len(data) < 64:
        fail(f"{path}: shorter than an event log header")
    size = struct.unpack_from("<I", data, 16)[0]
    records = []
    for off in range(64, len(data) - size + 1, size):
        kind, _detail, instance, iteration, aux, start, end = struct.unpack_from("<HHIIIqq", data, off)
        records.append((kind, instance, iteration, aux, start, end))
    return records


def us(ns):
    return ns / 1000.0


def close(a, b):
    return abs(a - b) < 0.0015


def check_format(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents array")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        fail("displayTimeUnit is neither ms nor ns")
    named_p, named_t, used = set(), set(), set()
    flows = collections.defaultdict(list)
    asyncs = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph not in PHASES:
            fail(f"unknown phase {ph!r}: {e}")
        if not isinstance(e.get("name"), str):
            fail(f"event without a name: {e}")
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int):
                fail(f"event without an integer {k}: {e}")
        if "args" in e and not isinstance(e["args"], dict):
            fail(f"args is not an object: {e}")
        if ph == "M":
            if e["name"] not in METADATA:
                fail(f"unknown metadata event {e['name']!r}")
            if e["name"].endswith("_name"):
                if not isinstance(e.get("args", {}).get("name"), str):
                    fail(f"metadata without args.name: {e}")
                (named_p if e["name"] == "process_name" else named_t).add(
                    e["pid"] if e["name"] == "process_name" else (e["pid"], e["tid"]))
            elif e["name"].endswith("_sort_index") and not isinstance(e.get("args", {}).get("sort_index"), int):
                fail(f"sort index metadata without an integer args.sort_index: {e}")
            continue
        if not isinstance(e.get("ts"), (int, float)):
            fail(f"timed event without a numeric ts: {e}")
        used.add((e["pid"], e["tid"]))
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            fail(f"complete event without a dur >= 0: {e}")
        if ph in ("i", "I") and e.get("s", "t") not in ("g", "p", "t"):
            fail(f"instant event with scope {e.get('s')!r}: {e}")
        if ph in ("s", "t", "f"):
            if "id" not in e or not isinstance(e.get("cat"), str):
                fail(f"flow event without id or cat: {e}")
            if ph == "f" and e.get("bp", "e") != "e":
                fail(f"flow finish with binding point {e.get('bp')!r}")
            flows[(e["cat"], e["id"])].append(e)
        if ph in ("b", "e"):
            if "id" not in e or not isinstance(e.get("cat"), str):
                fail(f"async event without id or cat: {e}")
            asyncs[(e["cat"], e["id"], e["name"])].append(e)
    for pid, tid in used:
        if pid not in named_p:
            fail(f"process {pid} has no process_name")
        if (pid, tid) not in named_t:
            fail(f"thread {pid}/{tid} has no thread_name")
    for key, evs in flows.items():
        phases = sorted(x["ph"] for x in evs)
        if phases != ["f", "s"]:
            fail(f"flow {key} has phases {phases}, not one s and one f")
        s, f = (next(x for x in evs if x["ph"] == p) for p in ("s", "f"))
        if s["ts"] > f["ts"] + 1e-9:
            fail(f"flow {key} finishes before it starts")
    for key, evs in asyncs.items():
        if sorted(x["ph"] for x in evs) != ["b", "e"]:
            fail(f"async slice {key} has phases {sorted(x['ph'] for x in evs)}, not one b and one e")
        b, e = (next(x for x in evs if x["ph"] == p) for p in ("b", "e"))
        if b["ts"] > e["ts"] + 1e-9:
            fail(f"async slice {key} ends before it begins")
    return flows, asyncs


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    trace, sched, log = sys.argv[1:4]
    doc = json.load(open(trace))
    flows, asyncs = check_format(doc)
    events = doc["traceEvents"]
    clients, runnables, epochs, instances, resources = read_schedule(sched)
    records = read_log(log)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    pnames = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    client_pid = {}
    for c, name in clients.items():
        pids = [p for p, n in pnames.items() if n == f"client '{name}'"]
        if len(pids) != 1:
            fail(f"{len(pids)} processes named for client {name!r}, expected one")
        client_pid[c] = pids[0]

    runs = [e for e in events if e["ph"] == "X" and e.get("cat", "").split(",")[0] == "run"]
    plans = [e for e in events if e["ph"] == "X" and e.get("cat") == "plan"]
    run_records = [r for r in records if r[0] == KIND_RUN]
    if len(runs) != len(run_records):
        fail(f"{len(runs)} executed events, the log has {len(run_records)} runs")
    by_key = {(e["args"]["instance"], e["args"]["iteration"]): e for e in runs}
    plan_by_key = {(e["args"]["instance"], e["args"]["iteration"]): e for e in plans}
    offset = None
    overruns = 0
    for kind, inst, it, aux, start, end in run_records:
        e = by_key.get((inst, it))
        if e is None:
            fail(f"no executed event for instance {inst} iteration {it}")
        shown = inst_runnable = instances[inst][0]
        if aux != NONE:
            shown = aux
        rname, client, _epoch, wcet = runnables[shown]
        if offset is None:
            offset = e["ts"] - us(start)
        if not close(e["ts"] - us(start), offset) or not close(e["dur"], us(end - start)):
            fail(f"instance {inst} iteration {it}: ts/dur {e['ts']}/{e['dur']} do not match the log's {start}..{end}")
        over = aux != NONE and end - start > wcet
        overruns += over
        want = ("OVERRUN " if over else "") + f"{clients[client]}.{rname}"
        if e["name"] != want or (("overrun" in e["cat"].split(",")) != over):
            fail(f"instance {inst} iteration {it}: named {e['name']!r} (cat {e['cat']}), expected {want!r}")
        a = e["args"]
        if not close(a["wcet_us"], us(wcet)) or not close(a["jitter_us"], e["ts"] - a["planned_start_us"]):
            fail(f"instance {inst} iteration {it}: args {a} do not give WCET {wcet} ns and jitter = ts - planned start")
        if e["pid"] != client_pid[runnables[inst_runnable][1]]:
            fail(f"instance {inst}: run in process {e['pid']}, not its client's {client_pid[runnables[inst_runnable][1]]}")
        hw = resources[instances[inst][4][0]]
        if names.get((e["pid"], e["tid"])) != hw:
            fail(f"instance {inst}: run on thread {names.get((e['pid'], e['tid']))!r}, not its resource {hw!r}")
        p = plan_by_key.get((inst, it))
        if p is None or p["pid"] != e["pid"] or names.get((p["pid"], p["tid"])) != hw + " plan":
            fail(f"instance {inst} iteration {it}: no plan event on thread '{hw} plan' beside the run")
        if not close(p["ts"], a["planned_start_us"]) or not close(p["dur"], us(instances[inst][3] - instances[inst][2])):
            fail(f"instance {inst} iteration {it}: plan event at {p['ts']} for {p['dur']}, the run says planned "
                 f"{a['planned_start_us']}")
    # The plan of every iteration the log names: all instances of the hyperepoch, nothing else.
    named = collections.defaultdict(set)
    for kind, inst, it, aux, start, end in records:
        if kind == KIND_RUN:
            named[epochs[runnables[instances[inst][0]][2]]].add(it)
        elif kind == KIND_RELEASE:
            named[epochs[inst]].add(it)
    want_plan = {(i, it) for i, x in instances.items() for it in named[epochs[runnables[x[0]][2]]]}
    if set(plan_by_key) != want_plan or len(plans) != len(want_plan):
        fail(f"{len(plans)} plan events, expected {len(want_plan)}: one per instance and iteration the log names")
    # Frame releases.
    releases = [e for e in events if e["ph"] == "i" and e.get("cat") == "release"]
    release_records = [r for r in records if r[0] == KIND_RELEASE]
    if len(releases) != len(release_records):
        fail(f"{len(releases)} release events, the log has {len(release_records)} releases")
    rel = {(e["args"]["iteration"], e["args"]["frame"], e["args"]["epoch"]): e for e in releases}
    for kind, epoch, it, frame, ideal, actual in release_records:
        matches = [e for (i2, f2, _), e in rel.items() if i2 == it and f2 == frame and close(e["ts"] - us(actual), offset)]
        if not matches or not any(close(e["args"]["jitter_us"], us(actual - ideal)) for e in matches):
            fail(f"no release event for epoch {epoch} iteration {it} frame {frame} at its time with its jitter")
    # Flow arrows: one per dependency between runs of two clients in the same iteration.
    ran = {(inst, it) for _, inst, it, _, _, _ in run_records}
    ends = collections.defaultdict(set)  # (phase, pid, tid, ts in ns) -> flow keys
    for key, v in flows.items():
        for x in v:
            ends[(x["ph"], x["pid"], x["tid"], round(x["ts"] * 1000))].add(key)
    expected = 0
    for inst, it in ran:
        c = runnables[instances[inst][0]][1]
        for d in instances[inst][5]:
            if runnables[instances[d][0]][1] != c and (d, it) in ran:
                expected += 1
                s = by_key[(d, it)]
                f = by_key[(inst, it)]
                pair = ends[("s", s["pid"], s["tid"], round(s["ts"] * 1000))] & \
                    ends[("f", f["pid"], f["tid"], round(f["ts"] * 1000))]
                if not pair:
                    fail(f"no flow arrow from instance {d} to instance {inst} in iteration {it}")
    if len(flows) != expected:
        fail(f"{len(flows)} flow arrows, expected {expected} (dependencies between runs of two clients)")
    # Chain occurrences: each from a logged ideal frame release to a logged run end.
    ideal_at = {round(us(r[4]) * 1000) for r in release_records}
    end_at = {round(us(r[5]) * 1000) for r in run_records}
    chains = [evs for (cat, _, _), evs in asyncs.items() if cat.split(",")[0] == "chain"]
    for evs in chains:
        b, e = (next(x for x in evs if x["ph"] == p) for p in ("b", "e"))
        if round((b["ts"] - offset) * 1000) not in ideal_at or round((e["ts"] - offset) * 1000) not in end_at:
            fail(f"chain slice {b['name']!r} from {b['ts']} to {e['ts']} is not from a frame release to a run's end")
        if not close(b["args"]["measured_us"], e["ts"] - b["ts"]):
            fail(f"chain slice {b['name']!r}: measured_us {b['args']['measured_us']} is not its length")
        if b["name"].startswith("MISS ") != (b["args"]["measured_us"] > b["args"]["planned_us"] or
                                              b["args"]["measured_us"] > b["args"].get("required_us", float("inf"))):
            fail(f"chain slice {b['name']!r}: named a miss or not against its bounds {b['args']}")
    print(f"check_trace: ok: {len(runs)} runs ({overruns} overruns), {len(plans)} plan events, {len(releases)} "
          f"releases, {len(flows)} cross-client flows, {len(clients)} client processes, {len(chains)} chain slices")
    return 0


if __name__ == "__main__":
    sys.exit(main())
