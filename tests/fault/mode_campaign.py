#!/usr/bin/env python3
# mode_campaign: the fault campaign per run kind (issue 48): single (one schedule), managed (two
# schedules under tactus-manager) and channel runs (a writer and a reader of a zero-copy channel,
# tests/channels/race.yaml, the reader checking every version it reads). Each trial is one cell of
# the run matrix (tests/matrix/run_matrix.py: the real master, clients and tactus-manager, every
# exit status, the named cause, nothing left in /dev/shm) run again on a fresh instance; the
# channel kind's cells are defined here. The table gives, per kind and fault: trials, clean,
# hangs, leftovers, unnamed or misnamed causes, crashes, other failures, and the exit latency
# (the fault -> the last master's exit; master kill -9: -> the last client's end) p50 / p99.
#
#   tests/fault/mode_campaign.py --build build --trials 20          # 20 trials per kind and fault
#   tests/fault/mode_campaign.py --build build --trials 2 --kinds channel --faults writer-kill -v
#
# The multi-SoC kinds (multisoc, managed-multisoc) are not in the default list: their masters share
# DDS domains, so run them alone (--kinds multisoc,managed-multisoc), never beside another DDS test.
import argparse
import os
import re
import shutil
import signal
import sys
import time
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "matrix"))
sys.path.insert(0, HERE)
import run_matrix as rm  # noqa: E402
from faultlib import now  # noqa: E402

M = rm  # the matrix's cells, rows and checks


class ChannelRow(rm.SingleRow):
    """A channel run: tests/channels/race.yaml, Writer.W writes channel D every 10 ms, Reader.R
    reads it; tactus-test-client checks each version it reads against the payload its writer run
    wrote (a torn or stale version counts as wrong or overwritten)."""
    key = "channel"
    client_names = ("Writer", "Reader")
    victim = "Writer"

    def schedules(self):
        return [self.ctx.schedule("tests/channels/race.yaml")]

    def start(self, cell, timeout_us=None, log=False, wrap=(), iterations=None):
        cell.masters = [cell.master("master", self.master_args(cell, timeout_us, log, iterations))]
        cell.clients = {n: cell.proc(n, "client", [self.ctx.prog["test-client"], "--name", n, "--instance",
                                                   cell.instance, "--channel", "D", "--busy-us", "300",
                                                   "--timeout-ms", "20000"])
                        for n in self.client_names}
        for p in cell.masters + list(cell.clients.values()):
            p.start()


READS_RE = re.compile(r"channel-reads ok=(\d+) no-version-yet=\d+ not-written=\d+ wrong=(\d+) overwritten=(\d+)")


def check_reads(cell, truncated=False):
    """The reader's versions: none torn or stale (wrong=0 overwritten=0) where it printed them. A
    segment truncated under a reader zeroes the buffer it holds (the pages are gone; the run ends
    naming the truncation): counted as overwritten there, and allowed; a wrong version never is."""
    m = READS_RE.search(cell.clients["Reader"].text())
    took = max([p.ended for p in cell.masters if p.ended is not None] or [cell.t_cause]) - cell.t_cause
    cell.outcome = "%s; %s; the master ended %.2f s after the fault" % (
        cell.statuses(), m.group(0) if m else "the reader printed no reads (it waits)", took)
    if m is None:
        return
    cell.reads = int(m.group(1))
    if int(m.group(2)) or (int(m.group(3)) and not truncated):
        cell.fail("the reader saw torn or stale versions: %s" % m.group(0))


def await_reads(cell, row):
    row.start(cell)
    row.await_running(cell)
    time.sleep(cell.rng_delay)


def ch_writer_kill(cell, row):
    """kill -9 of the writer at a random instant of its run (mid-write in some): the master exits 1
    naming it, the reader ends (10 + status) naming it, having read no torn or stale version."""
    await_reads(cell, row)
    w = cell.clients["Writer"]
    w.send(signal.SIGKILL)
    t0 = cell.t_cause = now()
    cell.expect_ended(cell.procs, t0 + rm.END_S, "%.0f s after the kill" % rm.END_S)
    cell.expect_status(cell.masters[0], 1)
    cell.expect_says(cell.masters[0], r"client 'Writer' \(pid %d\)" % w.pid, "name the killed writer")
    r = cell.clients["Reader"]
    cell.expect_status(r, {10 + k for k in range(1, 20)})
    cell.expect_says(r, r"Writer", "name the dead writer")
    check_reads(cell)
    cell.expect_clean("after every process ended")


def ch_writer_stuck(cell, row):
    """SIGSTOP of the writer (-t 1.5 s): the master exits 1 naming it stuck; continued, the reader
    ends; no torn or stale version was read."""
    row.start(cell, timeout_us=rm.STUCK_T_US)
    row.await_running(cell)
    time.sleep(cell.rng_delay)
    w = cell.clients["Writer"]
    w.send(signal.SIGSTOP)
    t0 = cell.t_cause = now()
    m = cell.masters[0]
    if not cell.expect_ended([m], t0 + rm.STUCK_T_US / 1e6 + rm.END_S, "after the writer's freeze"):
        raise rm.CellAbort()
    cell.expect_status(m, 1)
    cell.expect_says(m, r"client 'Writer' \(pid %d\) is stuck" % w.pid, "name the frozen writer as stuck")
    w.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + rm.END_S, "%.0f s after SIGCONT" % rm.END_S)
    cell.expect_says(cell.clients["Reader"], r"Writer|stuck", "name the stuck writer")
    check_reads(cell)
    cell.expect_clean("after every process ended")


def ch_master_sigterm(cell, row):
    """SIGTERM to the master with the writer frozen: the master exits 0 naming the writer after the
    grace; continued, every client exits 0; no torn or stale version was read."""
    await_reads(cell, row)
    w = cell.clients["Writer"]
    w.send(signal.SIGSTOP)
    time.sleep(0.05)
    m = cell.masters[0]
    m.send(signal.SIGTERM)
    t0 = cell.t_cause = now()
    if not cell.expect_ended([m], t0 + rm.GRACE_BOUND_S, "after SIGTERM"):
        raise rm.CellAbort()
    cell.expect_status(m, 0, "a stop by a signal")
    grace = r"client 'Writer' did not finish runnable 'Writer\.\w+' within 500ms"
    cell.expect_says(m, grace, "name the frozen writer")
    w.send(signal.SIGCONT)
    cell.expect_ended(cell.procs, now() + rm.END_S, "%.0f s after SIGCONT" % rm.END_S)
    for c in cell.clients.values():
        cell.expect_status(c, 0, "a stop by a signal")
    cell.expect_says(cell.clients["Reader"], grace, "name the frozen writer (the master's end)")
    check_reads(cell)
    cell.expect_clean("after every process ended")


def ch_master_kill(cell, row):
    """kill -9 of the master: the clients end naming the master (or wait for a new one, saying so)
    and remove its segment; no torn or stale version was read."""
    await_reads(cell, row)
    m = cell.masters[0]
    clients = list(cell.clients.values())
    said_before = {c.name: len(c.stderr()) for c in clients}  # the start-up's own "waiting for" lines
    m.send(signal.SIGKILL)
    t0 = cell.t_cause = now()

    def settled():
        return not m.alive() and all(
            not c.alive() or rm.faultlib.WAITING_RE.search(c.stderr()[said_before[c.name]:]) for c in clients)
    if not cell.wait_for(t0 + rm.END_S, settled):
        cell.fail("a client still running %.0f s after the master's kill (hang), not waiting for a new one"
                  % rm.END_S)
    for c in clients:
        if c.alive():
            c.waiting = True
        else:
            cell.expect_status(c, {10 + k for k in range(1, 20)})
            cell.expect_says(c, r"master", "name the master as the cause")
    check_reads(cell)
    cell.expect_clean("after the clients ended (or began to wait)")


def ch_truncated(cell, row):
    """The segment truncated to its header in the run: the master exits 1 naming it truncated, no
    process dies of SIGBUS, nothing is left; no torn or stale version was read."""
    await_reads(cell, row)
    path = rm.faultlib.segment_path(cell.instance)
    os.truncate(path, 4096)
    t0 = cell.t_cause = now()
    if not cell.expect_ended(cell.masters, t0 + rm.END_S, "after the truncation"):
        raise rm.CellAbort()
    cell.expect_status(cell.masters[0], 1)
    cell.expect_says(cell.masters[0], r"segment %s damaged: truncated" % re.escape(path), "name the truncation")
    cell.expect_ended(cell.procs, now() + rm.END_S, "after the master")
    for c in cell.clients.values():
        cell.expect_status(c, {10 + k for k in range(1, 20)}, "a truncated segment ends a client in order")
    check_reads(cell, truncated=True)
    cell.expect_clean("after every process ended")


CHANNEL_FAULTS = {"writer-kill": ("writer kill -9", ch_writer_kill), "writer-stuck": ("writer frozen (stuck)",
                                                                                    ch_writer_stuck),
                  "writer-frozen-sigterm": ("master SIGTERM, writer frozen", ch_master_sigterm),
                  "master-kill": ("master kill -9", ch_master_kill), "truncated": ("segment truncated", ch_truncated)}

# Per kind: the matrix row and the faults (matrix columns; the channel kind's are above).
KINDS = {
    "single": ("single", ["client-kill", "client-stuck", "master-sigterm", "master-kill", "truncated"]),
    "managed": ("managed", ["client-kill", "client-stuck", "master-sigterm", "master-kill", "truncated",
                            "manager-killed", "manager-damaged", "manager-damaged-sigterm", "startup-kill"]),
    "channel": ("channel", list(CHANNEL_FAULTS)),
    # Two SoCs' masters and clients over loopback DDS; a cell of a build without -Dmultisoc is skipped.
    "multisoc": ("multisoc", ["client-kill", "client-stuck", "client-exit-stuck", "master-sigterm",
                              "primary-sigterm", "master-kill", "restart-killed", "restart-killed-follower",
                              "truncated"]),
    "managed-multisoc": ("managed-multisoc", ["client-kill", "client-stuck", "master-sigterm", "primary-sigterm",
                                              "master-kill", "restart-killed", "manager-killed",
                                              "manager-damaged", "manager-damaged-sigterm", "startup-kill",
                                              "truncated"]),
}


def register_channel():
    """The channel kind's row and faults, as the matrix's (run_cell looks them up by name)."""
    rm.ROW_CLASSES["channel"] = ChannelRow
    rm.ROW_TITLE["channel"] = "channel"
    for key, (title, func) in CHANNEL_FAULTS.items():
        col = "ch-" + key
        rm.COLUMN_FUNCS[col] = func
        rm.COLUMN_TITLE[col] = title


GARBLED_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]|\?{2,}")


def classify(cell):
    """The trial's verdict classes: crash, hang, leftover, unnamed (or misnamed, or garbled) cause, other."""
    got = set()
    for p in cell.procs:
        if p.popen is None or p.role == "manager":
            continue
        if p.returncode is not None and p.returncode < 0 and -p.returncode not in p.sent and not p.cleanup_kill:
            got.add("crash")
        if p.cleanup_kill and not getattr(p, "waiting", False):
            got.add("hang")
        if GARBLED_RE.search(p.text()):
            got.add("unnamed")
            cell.failures.append("%s printed garbled text: %r" % (p.name, GARBLED_RE.search(p.text()).group(0)))
    for f in cell.failures:
        if "(hang)" in f or "still running" in f or "never reached" in f:
            got.add("hang")
        elif "left in /dev/shm" in f:
            got.add("leftover")
        elif "did not name" in f or "did not say" in f or re.search(r"did not (end|\w+ the)", f):
            got.add("unnamed")
        elif "killed by SIG" in f and "expected" in f and "SIGKILL" not in f:
            got.add("crash")
        else:
            got.add("other")
    return got


def latency(cell, fault):
    """Fault -> the last master's exit (master kill -9: -> the last client that ended)."""
    t0 = getattr(cell, "t_cause", None)
    if t0 is None:
        return None
    pick = [p for p in cell.procs if p.role == ("client" if fault.endswith("master-kill") else "master")]
    ends = [p.ended for p in pick if p.ended is not None and not p.cleanup_kill and p.ended >= t0]
    return max(ends) - t0 if ends else None


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def main():
    ap = argparse.ArgumentParser(description="tactus fault campaign per run kind (see the header of this file)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--source")
    ap.add_argument("--trials", type=int, default=20, help="trials per kind and fault (default 20)")
    ap.add_argument("--kinds", help="comma-separated: " + ",".join(KINDS))
    ap.add_argument("--faults", help="comma-separated faults (default: every fault of each kind)")
    ap.add_argument("--seed", type=int, default=48, help="seed of the random instants (default 48)")
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    import random
    rng = random.Random(args.seed)
    margs = argparse.Namespace(build=args.build, source=args.source, master=None, work=args.work, keep=args.keep,
                               verbose=args.verbose)
    ctx = rm.Context(margs)
    register_channel()
    kinds = args.kinds.split(",") if args.kinds else ["single", "managed", "channel"]
    for kind in kinds:
        if kind not in KINDS:
            ap.error("--kinds: unknown kind %r (known: %s)" % (kind, ", ".join(KINDS)))
    stats = defaultdict(lambda: defaultdict(int))
    lat = defaultdict(list)
    reads = 0
    begin = now()
    print("mode campaign: %d trials per kind and fault, seed %d" % (args.trials, args.seed), flush=True)
    try:
        for kind in kinds:
            row, faults = KINDS[kind]
            for fault in faults:
                if args.faults and fault not in args.faults.split(","):
                    continue
                column = ("ch-" + fault) if kind == "channel" else fault
                key = (kind, fault)
                for i in range(args.trials):
                    orig_cell = rm.Cell

                    class TrialCell(orig_cell):  # a random instant for the channel faults
                        def __init__(self, *a, **k):
                            super().__init__(*a, **k)
                            self.rng_delay = rng.uniform(0.05, 0.4)
                    rm.Cell = TrialCell
                    try:
                        cell = rm.run_cell(ctx, row, column, i)
                    finally:
                        rm.Cell = orig_cell
                    if cell.verdict == "SKIP":
                        stats[key]["skipped"] += 1
                        continue
                    got = classify(cell) if cell.verdict == "FAIL" or cell.failures else set()
                    if not got and cell.verdict not in ("PASS", "XPASS"):
                        got = {"other"}
                    stats[key]["trials"] += 1
                    stats[key]["clean"] += 0 if got else 1
                    for g in got:
                        stats[key][g] += 1
                    reads += getattr(cell, "reads", 0)
                    t = latency(cell, column)
                    if t is not None and not got:
                        lat[key].append(t)
    finally:
        if not args.keep:
            shutil.rmtree(ctx.work, ignore_errors=True)
    print("\nmode campaign: %d trials in %.0f s (seed %d)\n" % (
        sum(s["trials"] for s in stats.values()), now() - begin, args.seed))
    print("| kind x fault | trials | clean | hangs | leftovers | unnamed or misnamed | crashes | other | "
          "exit latency p50 / p99 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = 0
    for (kind, fault), s in stats.items():
        v = lat[(kind, fault)]
        title = rm.COLUMN_TITLE.get(("ch-" + fault) if kind == "channel" else fault, fault)
        print("| %s x %s | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            kind, title, s["trials"], s["clean"], s["hang"], s["leftover"], s["unnamed"], s["crash"], s["other"],
            "%.2f / %.2f s" % (pct(v, 0.5), pct(v, 0.99)) if v else "-"))
        failed += s["trials"] - s["clean"]
    if reads:
        print("\nchannel reads checked (none torn or stale where the count is clean): %d" % reads)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
