# faultlib: the fault-injection driver's machinery (processes, the segment's layout, one trial's
# timeline and its checks); fault_campaign.py defines the trials and runs the campaign.
import json
import stat
import os
import re
import signal
import subprocess
import threading
import time

# Every process of a trial must end this long after the trial's cause (or be waiting for a new
# master and say so on stderr).
END_WITHIN_S = 2.0
# Polling interval of a trial's loop.
POLL_S = 0.002
# Exit statuses the programs document: tactus-master 0 ok, 1 run failed, 2 bad input or busy
# instance; the sample client 0 ended, 1 init or run failed, 2 usage.
DOCUMENTED = {"master": {0, 1, 2}, "client": {0, 1, 2}}
# What a process says when it keeps waiting for a new master (see the runtime's contract).
WAITING_RE = re.compile(r"waiting for tactus-master", re.I)
# What a client prints when its run ended normally, and the master (with -v) likewise.
CLIENT_DONE_RE = re.compile(r"run ended \((frame-limit|exit-requested|stopped-by-signal)\)")
MASTER_DONE_RE = re.compile(r"tactus-master: (ran \d+ hyperepoch iterations|the master was stopped by a signal|"
                            r"client '\w+' requested exit)")
# What a process that ends with a non-zero status says at least (on stderr, or the client's
# "run ended (status): message" line on stdout).
# What no process may print: control bytes, bytes that are no UTF-8 (decoded as U+FFFD), or the
# '?' runs a message of random bytes becomes (issue 48, item 8: a client printed a damaged header's
# bytes as its cause).
GARBLED_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]|\?{2,}")
SAYS_WHY_RE = {"master": re.compile(r"tactus-master: (?!published)\S"),
               "client": re.compile(r"run ended \(|init failed|cannot register|\S+: .*(error|failed|cannot)", re.I)}


def now():
    return time.monotonic()


def signame(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "signal %d" % sig


def run_ordered(items, fn, jobs, alone=None, done=None, on_stop=None):
    """fn(item) for every item, `jobs` at a time in threads (the fault campaign's trials, the run
    matrix's cells: each on an instance of its own, spending most of its time waiting for processes);
    returns the results in the order of `items`. Items for which alone(item) is true run one at a
    time with nothing beside them, after the others (the matrix's multi-SoC cells: they share DDS
    domains, and their timing was measured alone). done(index, result) is called
    in the order of `items` as soon as every earlier item has finished (verdicts print in plan
    order). An exception of fn stops the start of further items and is raised here. When this
    thread is interrupted (SIGTERM's SystemExit), on_stop() is called (it may end the items in
    progress: kill their processes) and the items in progress are waited for (each is bounded)."""
    items = list(items)
    results, finished = [None] * len(items), [False] * len(items)
    pending = list(range(len(items)))
    is_alone = [bool(alone and alone(x)) for x in items]
    state = {"running": 0, "error": None, "stop": False}
    cond = threading.Condition()

    def pick():  # under cond: the next item a worker may start, or None
        i = next((i for i in pending if not is_alone[i]), pending[0])
        if is_alone[i] and state["running"]:
            return None
        pending.remove(i)
        return i

    def worker():
        while True:
            with cond:
                while True:
                    if state["stop"] or state["error"] or not pending:
                        return
                    i = pick()
                    if i is not None:
                        break
                    cond.wait()
                state["running"] += 1
            try:
                r = fn(items[i])
            except BaseException as e:  # noqa: B902 (handed to the caller's thread)
                with cond:
                    state["error"] = state["error"] or e
                    cond.notify_all()
                return
            with cond:
                results[i], finished[i] = r, True
                state["running"] -= 1
                cond.notify_all()

    threads = [threading.Thread(target=worker) for _ in range(max(1, min(jobs, len(items))))]
    for t in threads:
        t.start()
    reported = 0
    try:
        while reported < len(items):
            with cond:
                while not finished[reported] and not state["error"]:
                    cond.wait(0.5)
                if state["error"]:
                    raise state["error"]
            if done:
                done(reported, results[reported])
            reported += 1
    except BaseException:
        with cond:
            state["stop"] = True
            cond.notify_all()
        if on_stop:
            on_stop()
        raise
    finally:
        for t in threads:
            t.join()
    return results


class Layout:
    """The shared-memory layout as printed by tactus-fault-layout (from shm_layout.hpp)."""

    def __init__(self, probe):
        out = subprocess.run([probe], capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise SystemExit("fault: %s failed (exit %d): %s" % (probe, out.returncode, out.stderr.strip()))
        d = json.loads(out.stdout)
        self.header = d["header"]
        self.client_slot = d["client_slot"]
        self.header_size = d["header_size"]
        self.client_slot_size = d["client_slot_size"]
        self.magic = d["magic"]
        self.version = d["layout_version"]
        self.states = d["states"]
        self.state_names = {v: k for k, v in self.states.items()}

    def field(self, name, fields=None):
        for f in fields or self.header:
            if f["name"] == name:
                return f["offset"], f["size"]
        raise KeyError(name)


def segment_path(instance):
    return "/dev/shm/tactus_" + instance


class Segment:
    """Reads and damages an instance's segment through its file in /dev/shm (never follows a link)."""

    def __init__(self, layout, instance):
        self.layout = layout
        self.path = segment_path(instance)

    def _open(self, flags):
        try:
            return os.open(self.path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None

    def size(self):
        fd = self._open(os.O_RDONLY)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
            return st.st_size if stat.S_ISREG(st.st_mode) else None
        finally:
            os.close(fd)

    def read_bytes(self, offset, size):
        fd = self._open(os.O_RDONLY)
        if fd is None:
            return None
        try:
            b = os.pread(fd, size, offset)
            return b if len(b) == size else None
        except OSError:
            return None
        finally:
            os.close(fd)

    def read_uint(self, offset, size):
        b = self.read_bytes(offset, size)
        return int.from_bytes(b, "little") if b is not None else None

    def header_uint(self, name):
        off, size = self.layout.field(name)
        return self.read_uint(off, size)

    def state(self):
        """The segment's state name, None without a (complete, tactus) segment."""
        if self.header_uint("magic") != self.layout.magic:
            return None
        s = self.header_uint("state")
        return self.layout.state_names.get(s, "state %s" % s)

    def client_pids(self):
        """The pids registered in the client slots (bounded by the header's counts)."""
        base, count = self.header_uint("clientOffset"), self.header_uint("clientCount")
        if base is None or count is None or count > 64:
            return []
        off, size = self.layout.field("pid", self.layout.client_slot)
        pids = [self.read_uint(base + c * self.layout.client_slot_size + off, size) for c in range(count)]
        return [p for p in pids if p]

    def write(self, offset, data):
        fd = self._open(os.O_RDWR)
        if fd is None:
            return False
        try:
            os.pwrite(fd, data, offset)
            return True
        finally:
            os.close(fd)

    def truncate(self, size):
        fd = self._open(os.O_RDWR)
        if fd is None:
            return False
        try:
            os.ftruncate(fd, size)
            return True
        finally:
            os.close(fd)


class Proc:
    """One process of a trial: its role (master or client), output files, end time and status."""

    def __init__(self, trial, name, role, argv):
        self.trial, self.name, self.role, self.argv = trial, name, role, argv
        self.out_path = os.path.join(trial.dir, name + ".out")
        self.err_path = os.path.join(trial.dir, name + ".err")
        self.popen = None
        self.started = self.ended = None
        self.returncode = None
        self.sent = []            # signals the trial sent, in order
        self.stopped = False      # SIGSTOP sent and no SIGCONT yet
        self.cleanup_kill = False  # killed by the trial's clean-up (waiting or hung)
        self.env = None            # the process's environment (None: this one's)

    def start(self):
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.popen = subprocess.Popen(self.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                          start_new_session=True, env=self.env)
        self.started = now()
        self.trial.note("start %s (pid %d)" % (self.name, self.popen.pid))

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def alive(self):
        return self.popen is not None and self.ended is None

    def poll(self):
        if self.alive():
            rc = self.popen.poll()
            if rc is not None:
                self.ended, self.returncode = now(), rc

    def send(self, sig):
        if not self.alive():
            return False
        self.poll()
        if not self.alive():
            return False
        os.kill(self.popen.pid, sig)
        self.sent.append(sig)
        self.stopped = sig == signal.SIGSTOP or (self.stopped and sig != signal.SIGCONT)
        self.trial.note("%s -> %s" % (signame(sig), self.name))
        return True

    def kill_for_cleanup(self):
        if self.alive():
            self.cleanup_kill = True
            os.kill(self.popen.pid, signal.SIGKILL)
            if self.stopped:
                os.kill(self.popen.pid, signal.SIGCONT)
            self.popen.wait()
            self.poll()

    def text(self):
        parts = []
        for p in (self.err_path, self.out_path):
            try:
                with open(p, "rb") as f:
                    parts.append(f.read().decode("utf-8", "replace"))
            except OSError:
                pass
        return "\n".join(parts)

    def stderr(self):
        try:
            with open(self.err_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def status(self):
        if self.popen is None:
            return "not started"
        if self.ended is None:
            return "running"
        rc = self.returncode
        s = "exit %d" % rc if rc >= 0 else "killed by %s" % signame(-rc)
        if self.cleanup_kill:
            s += " (by the clean-up)"
        return s

    def tail(self, n=600):
        """The end of stderr, then the client's own words about how its run ended (stdout)."""
        t = self.stderr().strip() or "(nothing on stderr)"
        try:
            with open(self.out_path, "rb") as f:
                out = f.read().decode("utf-8", "replace")
        except OSError:
            out = ""
        said = [line for line in out.splitlines() if re.search(r"run ended|init failed|cannot register", line)]
        return (t[-n:] + ("\n(stdout) " + "\n(stdout) ".join(said[-2:]) if said else "")).strip()


class Trial:
    """One trial: an instance of its own, its processes, its cause (time) and its verdict."""

    def __init__(self, ctx, kind, index, seed, attempt=0):
        import random
        self.ctx, self.kind, self.index, self.seed, self.attempt = ctx, kind, index, seed, attempt
        self.rng = random.Random(seed)
        again = "r%d" % attempt if attempt else ""
        self.instance = "fault%d_%s%d%s" % (os.getpid(), kind, index, again)
        self.dir = os.path.join(ctx.work, "%s%d%s" % (kind, index, again))
        self.setup_failed = False  # the fault's precondition (a running run) was never reached
        os.makedirs(self.dir, exist_ok=True)
        self.procs = []
        self.cause = None      # (time, words)
        self.log = []
        self.failures = []
        self.outcome = "?"
        self.flags = set()     # crash, hang, leftover
        self.seg = Segment(ctx.layout, self.instance)
        self.t_begin = now()
        self.foreign = None    # what the trial placed at the segment name itself

    def note(self, words):
        self.log.append("%7.3f %s" % (now() - self.t_begin, words))

    def master(self, name="master", iterations=10, timeout_us=None, extra=()):
        t = self.ctx.master_timeout_us if timeout_us is None else timeout_us
        argv = [self.ctx.master, "-s", self.ctx.schedule, "-e", str(iterations), "-D", self.instance, "-t", str(t),
                "-v"] + list(extra)
        p = Proc(self, name, "master", argv)
        self.procs.append(p)
        return p

    def client(self, client_name, name=None):
        argv = [self.ctx.client, client_name, "--instance", self.instance]
        p = Proc(self, name or client_name, "client", argv)
        p.client_name = client_name
        self.procs.append(p)
        return p

    def poll(self):
        for p in self.procs:
            p.poll()

    def sleep_until(self, t, until=None):
        """Polls the processes until time t (or until `until()` holds); returns whether it held."""
        while True:
            self.poll()
            if until is not None and until():
                return True
            if now() >= t:
                return False
            time.sleep(POLL_S)

    def set_cause(self, words):
        self.cause = (now(), words)
        self.note("cause: " + words)

    def all_ended(self, procs=None):
        return all(not p.alive() or p.stopped for p in (procs or self.procs) if p.popen)

    def wait_end(self, deadline, procs=None):
        """Waits until every started process ended (stopped ones excepted) or the deadline."""
        return self.sleep_until(deadline, lambda: self.all_ended(procs))

    def fail(self, words):
        self.failures.append(words)

    def fail_setup(self, words):
        """The trial could not set up the situation its fault needs (a run that started): a failure,
        which the campaign retries once on a fresh instance (a machine that stalls for longer than
        the master's -t makes it; a tactus fault makes it again)."""
        self.setup_failed = True
        self.fail(words)

    def check_processes(self, deadline, cause_re=None, may_wait=True, ok_zero=True, cause_by_any=False):
        """The checks every trial makes: each started process ended by `deadline` (or waits for a new
        master, saying so, where `may_wait`), by no signal the trial did not send, with a documented
        status; a non-zero status comes with a message matching `cause_re`. Processes still alive
        are then killed (the clean-up). With `cause_by_any`, one process naming the cause is enough
        and the others need only say something (a damaged segment is seen first by some)."""
        self.sleep_until(deadline, lambda: self.all_ended())
        waiting = []
        for p in self.procs:
            if p.popen is None:
                continue
            if p.alive():
                if p.stopped:
                    p.send(signal.SIGCONT)
                if p.role == "client" and may_wait and WAITING_RE.search(p.stderr()) and self.instance in p.stderr():
                    waiting.append(p)
                    p.waiting = True
                    continue
                self.flags.add("hang")
                self.fail("%s still running %.1f s after the cause (hang); stderr: %s"
                          % (p.name, deadline - self.cause[0] if self.cause else 0, p.tail()))
        self.check_leftover()
        for p in self.procs:
            p.kill_for_cleanup()
        for p in self.procs:
            if p.popen is None or getattr(p, "waiting", False) or p.cleanup_kill:
                continue
            rc = p.returncode
            if rc < 0:
                if -rc in p.sent:
                    continue
                self.flags.add("crash")
                self.fail("%s was killed by %s, which the trial did not send (crash); stderr: %s"
                          % (p.name, signame(-rc), p.tail()))
                continue
            if rc not in DOCUMENTED[p.role]:
                self.fail("%s exited %d, not a documented status; stderr: %s" % (p.name, rc, p.tail()))
            elif rc == 0:
                done = CLIENT_DONE_RE if p.role == "client" else MASTER_DONE_RE
                cause = self.cause[1] if self.cause else "?"
                if not done.search(p.text()):
                    self.fail("%s exited 0 without finishing its run normally after: %s; output: %s"
                              % (p.name, cause, p.text()[-300:]))
                elif not ok_zero:
                    self.fail("%s completed its run (exit 0) although it should have ended after: %s"
                              % (p.name, cause))
            elif not SAYS_WHY_RE[p.role].search(p.text()):
                self.fail("%s exited %d silently (no message); output: %s" % (p.name, rc, p.text()[-300:]))
            elif cause_re is not None and not cause_by_any and not cause_re.search(p.text()):
                self.fail("%s exited %d without naming the cause (/%s/); stderr: %s"
                          % (p.name, rc, cause_re.pattern, p.tail()))
        for p in self.procs:
            garbled = GARBLED_RE.search(p.text()) if p.popen else None
            if garbled:
                self.flags.add("misnamed")
                self.fail("%s printed garbled text (%r): a cause taken from damaged bytes; output: %r"
                          % (p.name, garbled.group(0), p.text()[-300:]))
        failed = [p for p in self.procs if p.popen and p.returncode not in (0, None) and not p.cleanup_kill]
        if cause_re is not None and cause_by_any and failed and not any(cause_re.search(p.text()) for p in failed):
            self.fail("no process named the cause (/%s/)" % cause_re.pattern)
        return waiting

    def check_leftover(self):
        path = self.seg.path
        if self.foreign is not None:
            if self.foreign.still_there():
                return  # what the trial put there itself, untouched
        if os.path.lexists(path):
            self.flags.add("leftover")
            self.fail("%s was left in /dev/shm (state %s)" % (path, self.seg.state()))

    def cleanup(self):
        for p in self.procs:
            p.kill_for_cleanup()
        if self.foreign is not None:
            self.foreign.remove()
        path = self.seg.path
        if os.path.lexists(path):
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    import shutil
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass

    def report(self):
        verdict = "SETUP FAILED, RETRYING" if self.setup_failed and self.attempt == 0 else "FAIL"
        again = " (attempt %d)" % (self.attempt + 1) if self.attempt else ""
        lines = ["%s %s #%d%s (seed %d): %s" % (verdict, self.kind, self.index, again, self.seed,
                                                self.cause[1] if self.cause else "no cause")]
        lines += ["  - " + f for f in self.failures]
        for p in self.procs:
            if p.popen is None:
                continue
            when = " after %.3f s" % (p.ended - self.cause[0]) if p.ended and self.cause else ""
            lines.append("  %-9s %s%s" % (p.name, p.status(), when))
            for line in p.tail(400).splitlines()[-6:]:
                lines.append("      | " + line)
        lines.append("  timeline: " + "; ".join(self.log[-14:]))
        lines.append("  rerun: %s --one %s:%d" % (self.ctx.rerun_prefix, self.kind, self.index))
        return "\n".join(lines)
