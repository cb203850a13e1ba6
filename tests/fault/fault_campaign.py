#!/usr/bin/env python3
# fault_campaign: the fault-injection suite. Runs the real tactus-master and the two-client sample
# (schedules/two_client_multi_rate.yaml) on an instance of their own per trial and injects one
# fault each: kill -9 at a random instant, SIGSTOP/SIGCONT, a master restart, a damaged segment,
# a foreign file at the segment's name. Every trial checks that all processes end within 2 s of the
# cause (or keep waiting for a new master and say so), exit with a documented status naming the
# cause, never crash by a signal, and leave nothing of the instance in /dev/shm.
#
#   meson test -C build --suite fault -v            # the CI campaign (about 180 trials, 3 at a time)
#   tests/fault/fault_campaign.py --build build --seed 7 --campaign full    # the long campaign
#   tests/fault/fault_campaign.py --build build --seed 7 --one kill:17      # trial 17 of seed 7 only
#
# A failing trial prints its cause, each process's status and stderr tail, its timeline and the
# command that reruns it alone (the same seed gives the same trial: order, instants, damage).
import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
import tamper_trials  # noqa: E402
from faultlib import END_WITHIN_S, Trial, now  # noqa: E402

CLIENTS = ["Sensing", "Planning"]
RUN_S = 0.4  # -e 10 iterations of the 40 ms hyperepoch
# What a message about a damaged segment says (the field, the segment, or that it is damaged).
DAMAGE_RE = re.compile(r"segment|damaged|corrupt|out of range|invalid|bounds|layout|magic|version|field|hash", re.I)
# strerror texts of the errors a foreign file at the segment's name gives.
ERRNO_RE = re.compile(r"Is a directory|Directory not empty|Device or resource busy|Too many levels of symbolic links|"
                      r"Permission denied|Operation not permitted|Not a directory|No such device|Invalid argument")


# --- helpers shared by the trial kinds ---

def start_all(t, procs, max_gap=0.15):
    """Starts `procs` in a random order with random gaps; returns the time of the last start."""
    order = list(procs)
    t.rng.shuffle(order)
    at = now()
    for p in order:
        t.sleep_until(at)
        p.start()
        at = now() + t.rng.uniform(0, max_gap)
    return now()


def wait_state(t, states, timeout=2.0):
    """Polls the segment until its state is one of `states`; returns the state or None."""
    found = []

    def reached():
        s = t.seg.state()
        if s in states:
            found.append(s)
            return True
        return False
    t.sleep_until(now() + timeout, reached)
    return found[0] if found else None


def short_status(p):
    if getattr(p, "waiting", False):
        return "waits"
    if p.popen is None:
        return "-"
    if p.cleanup_kill:
        return "hung"
    rc = p.returncode
    return str(rc) if rc >= 0 else faultlib.signame(-rc)


def label(t, head, procs):
    return "%s -> %s" % (head, " ".join("%s=%s" % (n, short_status(p)) for n, p in procs))


# --- kill -9 at a random instant across start-up and run ---

def trial_kill(t):
    rng = t.rng
    m = t.master()
    cs = {n: t.client(n) for n in CLIENTS}
    procs = {"master": m, **cs}
    target_name = rng.choice(["master"] + CLIENTS)
    target = procs[target_name]
    order = list(procs.values())
    rng.shuffle(order)
    gaps = [0.0] + [rng.uniform(0, 0.15) for _ in order[1:]]
    kill_at = rng.uniform(0, 0.6)
    base = now()
    starts, at = [], 0.0
    for p, g in zip(order, gaps):
        at += g
        starts.append((at, p))
    start_of_target = next(s for s, p in starts if p is target)
    kill_at = max(kill_at, start_of_target + rng.uniform(0, 0.03))
    # Some masters are killed right as their run ends: between publishing the end and removing the
    # segment's name (while the clients leave), the window where a dead master leaves its segment.
    at_end = target_name == "master" and rng.random() < 0.3
    if at_end:
        kill_at = max(s for s, _ in starts)
    events = sorted([(s, "start", p) for s, p in starts] + [(kill_at, "kill", target)], key=lambda e: e[0])
    phase, registered, missed = "?", False, False
    for when, what, p in events:
        t.sleep_until(base + when)
        if what == "start":
            p.start()
            continue
        if at_end:
            wait_state(t, {"finished", "aborted"}, 3.0)
        phase = t.seg.state() or "none"
        registered = target_name != "master" and target.pid in t.seg.client_pids()
        if not target.send(signal.SIGKILL):
            missed = True
            t.set_cause("kill -9 %s missed: it had ended (%s)" % (target_name, target.status()))
        else:
            t.set_cause("kill -9 %s at %.0f ms, segment %s%s" % (target_name, (now() - base) * 1000, phase,
                                                               ", its pid registered" if registered else ""))
    last_start = max(p.started for p in procs.values())
    deadline = max(t.cause[0], last_start) + END_WITHIN_S
    cause_re = re.compile("master" if target_name == "master" else re.escape(target_name))
    t.check_processes(deadline, cause_re=None if missed else cause_re)
    if registered and "did not come" in m.text():
        t.fail("client %s had registered (pid %d in its slot) when it was killed, but the master reported it as "
               "'did not come' at -t instead of a death" % (target_name, target.pid))
    if not missed and target_name != "master" and m.ended and t.cause:
        t.latency = m.ended - t.cause[0]
    elif not missed and target_name == "master":
        ends = [c.ended for c in cs.values() if c.ended and not c.cleanup_kill]
        if ends and len(ends) == len(cs):
            t.latency = max(ends) - t.cause[0]
    who = "master" if target_name == "master" else "client"
    head = "%s killed, segment %s%s" % (who, "missed" if missed else phase, ", its pid registered" if registered else "")
    others = [(n if n == "master" else ("killed" if p is target else "other"), p) for n, p in procs.items()]
    t.outcome = label(t, head, [(n, p) for n, p in others if p is not target])
    t.latency_class = "kill -9 %s, segment %s%s" % (who, phase, ", registered" if registered else "") if not missed else None


# --- SIGSTOP / SIGCONT ---

def trial_stop(t):
    rng = t.rng
    m = t.master()
    cs = {n: t.client(n) for n in CLIENTS}
    procs = {"master": m, **cs}
    variant = ["client-long", "client-short", "client-long", "master"][t.index % 4]
    target_name = "master" if variant == "master" else rng.choice(CLIENTS)
    target = procs[target_name]
    budget = t.ctx.master_timeout_us / 1e6
    start_all(t, procs.values(), 0.1)
    if rng.random() < 0.25:
        t.sleep_until(now() + rng.uniform(0, 0.05))
    else:
        wait_state(t, {"running"})
        t.sleep_until(now() + rng.uniform(0, 0.2))
    phase = t.seg.state() or "no segment"
    registered = target_name != "master" and target.pid in t.seg.client_pids()
    freeze = {"client-long": budget + 0.8, "client-short": rng.uniform(0.1, 0.3), "master": rng.uniform(0.2, 1.5)}[variant]
    if not target.send(signal.SIGSTOP):
        t.set_cause("SIGSTOP %s missed: it had ended" % target_name)
        t.check_processes(now() + END_WITHIN_S)
        t.outcome = "missed"
        return
    t.set_cause("SIGSTOP %s for %.0f ms, segment %s (%s)" % (target_name, freeze * 1000, phase, variant))
    t0 = t.cause[0]
    others = [p for p in procs.values() if p is not target]
    if variant == "client-long":
        # The master must report the frozen client as stuck by name within its budget (-t here, the
        # schedule has no Monitor budget), and every other process end within 2 s of that.
        ended = t.wait_end(t0 + budget + END_WITHIN_S, others)
        if not ended:
            t.flags.add("hang")
            t.fail("with %s frozen, %s still running %.1f s later (budget %.1f s + %.0f s)"
                   % (target_name, ", ".join(p.name for p in others if p.alive()), budget + END_WITHIN_S, budget,
                      END_WITHIN_S))
        elif target_name not in m.text():
            t.fail("the master did not name the frozen client %s: %s" % (target_name, m.tail()))
        elif phase == "running" and not re.search(r"stuck", m.text(), re.I):
            # Frozen before it entered (or attached), a client is one that did not come or enter.
            t.fail("the master did not report %s as stuck: %s" % (target_name, m.tail()))
        t.sleep_until(max(now(), t0 + freeze))
        target.send(signal.SIGCONT)
        t1 = now()
        t.check_processes(t1 + END_WITHIN_S, cause_re=re.compile(r"stuck|%s|master" % target_name), ok_zero=False)
    else:
        t.sleep_until(t0 + freeze)
        target.send(signal.SIGCONT)
        t1 = now()
        # A freeze shorter than the budget (or of the master) only delays the run: it completes.
        t.check_processes(t1 + RUN_S + END_WITHIN_S, cause_re=re.compile(r"^\b$"))
    t.outcome = label(t, "%s, segment %s%s" % (variant, phase, ", attached" if registered else ""),
                      list(procs.items()))


# --- master restart ---

def trial_restart(t):
    rng = t.rng
    variant = ["in-run", "before-attach"][t.index % 2]
    if variant == "in-run":
        a = t.master("masterA", iterations=0)
        first = {n: t.client(n, n + "1") for n in CLIENTS}
        start_all(t, [a] + list(first.values()), 0.1)
        if wait_state(t, {"running"}) is None:
            t.fail_setup("the first run did not start: %s" % a.tail())
        t.sleep_until(now() + rng.uniform(0, 0.3))
        sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM])
        a.send(sig)
        t.set_cause("%s master A in its run" % faultlib.signame(sig))
        t0 = t.cause[0]
        b = t.master("masterB", iterations=5)
        b_at = t0 + rng.uniform(0, 0.3)
        second = {}
        # A supervisor (systemd's Restart=always): each client is started again once it ended.
        while now() < t0 + END_WITHIN_S and (len(second) < len(first) or b.popen is None):
            t.poll()
            if b.popen is None and now() >= b_at:
                b.start()
            for n, p in first.items():
                if n not in second and not p.alive():
                    second[n] = t.client(n, n + "2")
                    second[n].start()
            time.sleep(faultlib.POLL_S)
        # The loop above ends once B and the clients' successors are started, which may be before
        # A and its clients have ended: they have until END_WITHIN_S after the cause.
        for p in [a] + list(first.values()):
            while p.alive() and now() < t0 + END_WITHIN_S:
                t.poll()
                time.sleep(faultlib.POLL_S)
            if p.alive():
                t.flags.add("hang")
                t.fail("%s still running %.1f s after the master was stopped" % (p.name, END_WITHIN_S))
        last = max(p.started for p in t.procs if p.started)
        t.check_processes(last + RUN_S / 2 + END_WITHIN_S, cause_re=re.compile("master"))
        for n, p in second.items():
            if p.returncode != 0:
                t.fail("restarted client %s did not run with the new master: %s" % (n, p.status()))
        if b.returncode != 0:
            t.fail("the new master did not complete its run: %s" % b.status())
        t.outcome = label(t, "%s master in run" % faultlib.signame(sig),
                          [("A", a), ("clients1", list(first.values())[0]), ("B", b)] +
                          [("clients2", p) for p in list(second.values())[:1]])
    else:
        a = t.master("masterA", iterations=5)
        a.start()
        if wait_state(t, {"published"}) is None:
            t.fail("master A did not publish: %s" % a.tail())
        a.send(signal.SIGKILL)
        t.set_cause("kill -9 master A after publishing, before any client attached")
        t0 = t.cause[0]
        cs = [t.client(n) for n in CLIENTS]
        start_all(t, cs, 0.1)
        b_at = now() + rng.uniform(0.5, 0.9)
        t.sleep_until(b_at)
        for c in cs:
            if c.alive() and not (faultlib.WAITING_RE.search(c.stderr()) and t.instance in c.stderr()):
                t.fail("client %s waits for a new master without saying so on stderr (%.1f s after the cause)"
                       % (c.name, now() - t0))
        if os.path.lexists(t.seg.path):
            t.flags.add("leftover")
            t.fail("the dead master's segment is still in /dev/shm %.1f s after it died, with clients waiting"
                   % (now() - t0))
        b = t.master("masterB", iterations=5)
        b.start()
        t.check_processes(now() + RUN_S + END_WITHIN_S, cause_re=re.compile("master"))
        if any(c.returncode != 0 for c in cs) or b.returncode != 0:
            t.fail("the waiting clients did not complete a run with the new master")
        t.outcome = label(t, "kill -9 master before attach", [("B", b)] + [(c.name, c) for c in cs])


# --- damaged segment ---

def damage_plan(layout):
    """The damage modes, in the order trials take them: whole-segment modes, then each header field."""
    plan = [("random", None), ("zeros", None), ("truncate", None)]
    plan += [("field", f["name"]) for f in layout.header]
    plan += [("slot", f["name"]) for f in layout.client_slot if not f["name"].startswith("reserved")]
    return plan


def apply_damage(t, mode, field):
    rng, seg, layout = t.rng, t.seg, t.ctx.layout
    size = seg.size()
    if size is None:
        return "no segment to damage"
    if mode in ("random", "zeros"):
        extent = rng.choice(["header", "segment"])
        n = layout.header_size if extent == "header" else size
        data = os.urandom(n) if mode == "random" else bytes(n)
        seg.write(0, data)
        return "%s over the %s (%d bytes)" % (mode, extent, n)
    if mode == "truncate":
        to = rng.choice([0, layout.header_size // 2, layout.header_size, size // 2, size - 4096])
        seg.truncate(to)
        return "truncated from %d to %d bytes" % (size, to)
    where = "header field %s" % field
    if mode == "slot":  # a client's slot: the master must not trust what a client wrote there
        c = rng.randrange(2)
        base = seg.header_uint("clientOffset")
        if base is None or base > size:
            return "no client slots to damage"
        off, n = layout.field(field, layout.client_slot)
        off += base + c * layout.client_slot_size
        where = "client slot %d field %s" % (c, field)
    else:
        off, n = layout.field(field)
    old = seg.read_uint(off, n) if n <= 8 else None
    how = rng.choice(["ones", "byte3", "zero", "random"])
    if how == "ones":
        data = b"\xff" * n
    elif how == "zero":
        data = bytes(n)
    elif how == "random":
        data = os.urandom(n)
    else:  # one wrong byte: +2^24 on a 4- or 8-byte field, the top byte of a smaller one
        b = bytearray(seg.read_bytes(off, n) or bytes(n))
        b[min(3, n - 1)] ^= 0x01
        data = bytes(b)
    seg.write(off, data)
    return "%s (%d bytes at %d) %s: %s -> %s" % (where, n, off, how, old,
                                                             int.from_bytes(data, "little") if n <= 8 else "...")


def trial_damage(t):
    rng = t.rng
    plan = damage_plan(t.ctx.layout)
    mode, field = plan[(t.index // 2) % len(plan)]
    timing = ["before-attach", "in-run"][t.index % 2]
    m = t.master()
    cs = [t.client(n) for n in CLIENTS]
    if timing == "before-attach":
        m.start()
        if wait_state(t, {"published"}) is None:
            t.fail_setup("the master did not publish: %s" % m.tail())
        what = apply_damage(t, mode, field)
        t.set_cause("damage before attach: " + what)
        start_all(t, cs, 0.1)
    else:
        start_all(t, [m] + cs, 0.1)
        if wait_state(t, {"running"}) is None:
            t.fail_setup("the run did not start: %s" % m.tail())
        t.sleep_until(now() + rng.uniform(0, 0.2))
        what = apply_damage(t, mode, field)
        t.set_cause("damage in run: " + what)
    last = max(p.started for p in t.procs)
    t.check_processes(max(last, t.cause[0]) + END_WITHIN_S, cause_re=DAMAGE_RE, cause_by_any=True)
    name = mode if field is None else "%s %s" % ("field" if mode == "field" else "client slot", field)
    t.outcome = label(t, "%s %s" % (timing, name), [("master", m)] + [(c.name, c) for c in cs])
    t.outcome_class = "%s %s" % (timing, mode)


# --- foreign files at the segment's name ---

class Foreign:
    """Something the trial put at the segment's name itself; removed by the trial's clean-up."""

    def __init__(self, t, kind):
        self.t, self.kind, self.path, self.mounted = t, kind, t.seg.path, False
        p = self.path
        garbage = os.path.join(t.dir, "garbage")
        with open(garbage, "wb") as f:
            f.write(os.urandom(4096))
        if kind == "directory":
            os.mkdir(p)
        elif kind == "directory-with-file":
            os.mkdir(p)
            with open(os.path.join(p, "file"), "w") as f:
                f.write("not a segment\n")
        elif kind == "symlink-dangling":
            os.symlink(os.path.join(t.dir, "nothing-here"), p)
        elif kind == "symlink-to-file":
            os.symlink(garbage, p)
        elif kind == "fifo":
            os.mkfifo(p, 0o600)
        elif kind == "regular-garbage":
            shutil.copy(garbage, p)
        elif kind == "regular-empty":
            open(p, "wb").close()
        elif kind == "stale-header":
            layout = t.ctx.layout
            b = bytearray(layout.header_size)
            for name, value in (("magic", layout.magic), ("layoutVersion", layout.version),
                                ("headerSize", layout.header_size), ("totalSize", 1 << 40),
                                ("masterPid", 0x3ffffff0), ("state", layout.states["published"])):
                off, n = layout.field(name)
                b[off:off + n] = value.to_bytes(n, "little")
            with open(p, "wb") as f:
                f.write(b)
        elif kind == "bind-mounted-file":
            open(p, "wb").close()
            r = subprocess.run(["mount", "--bind", garbage, p], capture_output=True, text=True)
            if r.returncode != 0:
                os.unlink(p)
                raise OSError("mount --bind is not available here: " + r.stderr.strip())
            self.mounted = True
        st = os.lstat(p)
        self.ident = (st.st_mode & 0o170000, st.st_ino)

    def still_there(self):
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        return (st.st_mode & 0o170000, st.st_ino) == self.ident

    def remove(self):
        if self.mounted:
            subprocess.run(["umount", self.path], capture_output=True)
            self.mounted = False
        if os.path.isdir(self.path) and not os.path.islink(self.path):
            shutil.rmtree(self.path, ignore_errors=True)
        elif os.path.lexists(self.path):
            os.unlink(self.path)


FOREIGN_KINDS = ["directory", "directory-with-file", "symlink-dangling", "symlink-to-file", "fifo",
                 "regular-garbage", "regular-empty", "stale-header", "bind-mounted-file"]


def trial_foreign(t):
    kind = FOREIGN_KINDS[t.index % len(FOREIGN_KINDS)]
    try:
        t.foreign = Foreign(t, kind)
    except OSError as e:
        t.outcome = "%s: skipped (%s)" % (kind, e)
        t.skipped = True
        return
    m = t.master()
    cs = [t.client(n) for n in CLIENTS]
    t.set_cause("a %s at %s before the master starts" % (kind, t.seg.path))
    last = start_all(t, [m] + cs, 0.1)
    t.check_processes(last + RUN_S + END_WITHIN_S,
                      cause_re=re.compile(re.escape(t.seg.path) + "|" + re.escape(t.instance)))
    text = m.text()
    if m.returncode == 2 and not ERRNO_RE.search(text):
        t.fail("the master refused the %s without the real error in its message: %s" % (kind, m.tail()))
    if "keeps reappearing" in text:
        t.fail("the master blamed a %s on a segment that 'keeps reappearing': %s" % (kind, m.tail()))
    if "published schedule" in text and any(c.returncode != 0 for c in cs):
        t.fail("the master replaced the %s and published, but the clients gave up instead of waiting for it: %s"
               % (kind, "; ".join("%s %s" % (c.name, c.status()) for c in cs)))
    if m.returncode == 0 and t.foreign.still_there():
        t.fail("the master ran although the %s is still at the segment's name" % kind)
    t.outcome = label(t, kind, [("master", m)] + [(c.name, c) for c in cs])


KINDS = {"kill": trial_kill, "stop": trial_stop, "restart": trial_restart, "damage": trial_damage,
         "foreign": trial_foreign, "tamper": lambda t: tamper_trials.trial_tamper(t, sys.modules[__name__])}


# --- the campaign ---

class Context:
    """What every trial uses: the programs, the compiled schedule, the layout, the work folder."""

    def __init__(self, args):
        b = args.build
        self.master = args.master or os.path.join(b, "master", "tactus-master")
        self.compile = args.compile or os.path.join(b, "compiler", "tactus-compile")
        self.client = args.client or os.path.join(b, "samples", "tactus-sample-two-client")
        probe = args.layout or os.path.join(b, "tests", "fault", "tactus-fault-layout")
        for path in (self.master, self.compile, self.client, probe):
            if not os.access(path, os.X_OK):
                raise SystemExit("fault: %s is not an executable (build it, or pass --build)" % path)
        self.layout = faultlib.Layout(probe)
        self.keep = args.keep
        self.work = tempfile.mkdtemp(prefix="tactus-fault-", dir=args.work)
        self.master_timeout_us = args.master_timeout_us
        source = args.source or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        graph = os.path.join(source, "schedules", "two_client_multi_rate.yaml")
        self.schedule = os.path.join(self.work, "tcmr.tsched")
        r = subprocess.run([self.compile, "-i", graph, "-o", self.schedule], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("fault: cannot compile %s: %s" % (graph, r.stderr))
        self.rerun_prefix = " ".join([sys.argv[0], "--build", b, "--seed", str(args.seed)])


def trial_seed(seed, kind, index):
    return random.Random("%d:%s:%d" % (seed, kind, index)).randrange(1 << 31)


CAMPAIGNS = {  # trials per kind, and trials at a time
    "ci": {"kill": 50, "stop": 4, "restart": 4, "damage": None, "foreign": len(FOREIGN_KINDS), "tamper": 20, "jobs": 3},
    "full": {"kill": 200, "stop": 20, "restart": 20, "damage": 160, "foreign": 2 * len(FOREIGN_KINDS), "tamper": 40,
             "jobs": 3},
    # The sanitizer builds' campaign: every damage and foreign trial (what a sanitizer checks: the
    # readers of a damaged segment), fewer kill, stop and restart trials (process timing, which the
    # plain build's campaign covers fifty times over at a third of the cost).
    # Two at a time: a sanitized process needs two to three times the CPU.
    "sanitizer": {"kill": 10, "stop": 2, "restart": 2, "damage": None, "foreign": len(FOREIGN_KINDS), "tamper": 5,
                  "jobs": 2},
}


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def summarize(trials, seed, elapsed, retried=()):
    by_kind = defaultdict(list)
    for t in trials:
        by_kind[t.kind].append(t)
    print("\nfault campaign, seed %d: %d trials in %.0f s" % (seed, len(trials), elapsed))
    if retried:
        print("retried once because their run never started (reports above): %s"
              % ", ".join("%s #%d" % (t.kind, t.index) for t in retried))
    head = "%-8s %7s %7s %7s %8s %6s %10s %7s" % ("class", "trials", "passed", "failed", "crashes", "hangs",
                                                   "leftovers", "skipped")
    print(head)
    print("-" * len(head))
    tot = Counter()
    for kind in KINDS:
        ts = by_kind.get(kind, [])
        if not ts:
            continue
        row = Counter(trials=len(ts), skipped=sum(1 for t in ts if getattr(t, "skipped", False)),
                      failed=sum(1 for t in ts if t.failures),
                      crashes=sum(1 for t in ts if "crash" in t.flags), hangs=sum(1 for t in ts if "hang" in t.flags),
                      leftovers=sum(1 for t in ts if "leftover" in t.flags))
        row["passed"] = row["trials"] - row["failed"] - row["skipped"]
        tot.update(row)
        print("%-8s %7d %7d %7d %8d %6d %10d %7d" % (kind, row["trials"], row["passed"], row["failed"], row["crashes"],
                                                    row["hangs"], row["leftovers"], row["skipped"]))
    print("-" * len(head))
    print("%-8s %7d %7d %7d %8d %6d %10d %7d" % ("all", tot["trials"], tot["passed"], tot["failed"], tot["crashes"],
                                                tot["hangs"], tot["leftovers"], tot["skipped"]))
    print("\noutcomes (survivors' exit status; waits = waiting for a new master, saying so; hung = killed by the clean-up):")
    for kind in KINDS:
        counts = Counter((t.outcome, bool(t.failures)) for t in by_kind.get(kind, []))
        for (outcome, failed), n in sorted(counts.items()):
            print("  %-8s %4d  %s%s" % (kind, n, outcome, "  [FAIL]" if failed else ""))
    lat = defaultdict(list)
    for t in by_kind.get("kill", []):
        if getattr(t, "latency", None) is not None and getattr(t, "latency_class", None) and not t.failures:
            lat[t.latency_class].append(t.latency * 1000)
    if lat:
        print("\nkill -9: cause -> survivors ended (ms), passed trials:")
        for k, v in sorted(lat.items()):
            print("  %-44s n=%3d  p50 %6.0f  max %6.0f" % (k, len(v), statistics.median(v), max(v)))
    return tot["failed"]


def main():
    ap = argparse.ArgumentParser(description="tactus fault-injection campaign (see the header of this file)")
    ap.add_argument("--build", default="build", help="meson build folder with the programs (default ./build)")
    ap.add_argument("--source", help="source root (default: two folders up from this file)")
    ap.add_argument("--master"), ap.add_argument("--compile"), ap.add_argument("--client"), ap.add_argument("--layout")
    ap.add_argument("--seed", type=int, help="campaign seed (default: from the clock; printed)")
    ap.add_argument("--campaign", choices=sorted(CAMPAIGNS), default="ci")
    ap.add_argument("--trials", type=int, help="kill -9 trials (default: the campaign's)")
    for kind in ("stop", "restart", "damage", "foreign", "tamper"):
        ap.add_argument("--" + kind, type=int, dest=kind, help="%s trials (default: the campaign's)" % kind)
    ap.add_argument("--jobs", type=int, help="trials at a time (default: the campaign's, 1 with --one)")
    ap.add_argument("--only", help="comma-separated kinds to run: " + ",".join(KINDS))
    ap.add_argument("--one", metavar="KIND:INDEX", help="run only trial INDEX of KIND (with the same --seed)")
    ap.add_argument("--master-timeout-us", type=int, default=1_200_000, help="the master's -t (default 1.2 s)")
    ap.add_argument("--work", help="folder for the trials' files (default: the system's temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the trials' files")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per trial")
    args = ap.parse_args()
    # meson's timeout (SIGTERM) ends the campaign through the `finally`s below: the trial's
    # processes are killed and what it put in /dev/shm (a bind mount too) is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.seed is None:
        args.seed = int(time.time()) % 1000000
    print("fault: seed %d (rerun with --seed %d)" % (args.seed, args.seed), flush=True)
    ctx = Context(args)
    counts = dict(CAMPAIGNS[args.campaign])
    if args.jobs is None:
        args.jobs = 1 if args.one else counts.pop("jobs")
    counts.pop("jobs", None)
    if counts["damage"] is None:
        counts["damage"] = 2 * len(damage_plan(ctx.layout))  # every mode and field, before attach and in run
    if args.trials is not None:
        counts["kill"] = args.trials
    for kind in ("stop", "restart", "damage", "foreign", "tamper"):
        if getattr(args, kind) is not None:
            counts[kind] = getattr(args, kind)
    plan = []
    if args.one:
        kind, _, index = args.one.partition(":")
        if kind not in KINDS or not index.isdigit():
            raise SystemExit("fault: --one expects KIND:INDEX with KIND one of " + ",".join(KINDS))
        plan = [(kind, int(index))]
    else:
        only = set(args.only.split(",")) if args.only else set(KINDS)
        for kind in KINDS:
            if kind in only:
                plan += [(kind, i) for i in range(counts[kind])]
    # Trials run --jobs at a time, each on an instance of its own: a trial spends most of its time
    # waiting (for a run to start, for its processes to end), so the campaign's time is set by those
    # waits, not by the CPU; the verdicts are printed as trials end and summed in plan order.
    def run_one(item):
        kind, i = item
        tries = []
        for attempt in range(2):
            t = Trial(ctx, kind, i, trial_seed(args.seed, kind, i), attempt)
            try:
                KINDS[kind](t)
            except Exception as e:  # a driver error fails the trial, never the campaign
                t.fail("driver error: %r" % e)
            finally:
                t.cleanup()
            with print_lock:
                if t.failures:
                    print(t.report(), flush=True)
                elif args.verbose:
                    print("ok   %s #%d (seed %d): %s" % (kind, i, t.seed, t.outcome), flush=True)
            tries.append(t)
            # A run that never started is retried once (counted in the summary): the second
            # attempt's verdict is the trial's.
            if not (t.failures and t.setup_failed) or attempt == 1:
                break
        return tries
    print_lock = threading.Lock()
    trials, retried = [], []
    begin = now()
    try:
        for tries in faultlib.run_ordered(plan, run_one, args.jobs):
            retried += tries[:-1]
            trials.append(tries[-1])
    finally:
        if not ctx.keep:
            shutil.rmtree(ctx.work, ignore_errors=True)
    failed = summarize(trials, args.seed, now() - begin, retried)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
