# tamper_trials: the fault campaign's same-user tampering trials (issue 48, items 8 and 9), kind
# "tamper" of fault_campaign.py. Variants, in turn:
#   forge-gone     the published master frozen, its header's masterPid written over with a pid that
#                  is gone; the clients arrive and look; a second master is started on the instance
#   forge-live     the same with the pid of a live process of the same user that has not mapped the
#                  segment (a `sleep`), its start time written too
#   forge-kthread  the same with pid 2 (kthreadd: a live process whose memory maps read empty, as an
#                  exiting process's do), its start time written too
#   garbage        random bytes over the whole header while the run goes
#   truncate0      the segment truncated to 0 bytes while the run goes
# The forged header must never make a client remove a live master's segment, nor a second master
# take the instance (the master's lock proves it the owner, whatever the header says: item 9); the
# master names the field it finds written over. After header damage no process prints garbage
# (a client takes the master's end only through validated fields) and a truncation is named as a
# truncation, by the master (not as a ring field) and by the clients (not as the master's death):
# item 8.
import os
import re
import signal
import subprocess

from faultlib import END_WITHIN_S, now

VARIANTS = ["forge-gone", "forge-live", "forge-kthread", "garbage", "truncate0"]
# A client's words for removing the segment it looked at.
REMOVED_RE = re.compile(r"removed the segment it left|removed it\b")


def gone_pid():
    """A pid that is no process now (a child that has exited and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def forge(t, campaign, kind):
    m = t.master()
    m.start()
    if campaign.wait_state(t, {"published"}) is None:
        t.fail_setup("the master did not publish: %s" % m.tail())
        return m, [], None
    inode = os.stat(t.seg.path).st_ino
    m.send(signal.SIGSTOP)  # the clients look while the master cannot notice: it lives, and holds its lock
    sleeper = None
    pid_off, pid_n = t.ctx.layout.field("masterPid")
    st_off, st_n = t.ctx.layout.field("masterStartTime")
    if kind == "live":
        sleeper = subprocess.Popen(["sleep", "30"])
        pid = sleeper.pid
    else:
        pid = 2 if kind == "kthread" else gone_pid()
    if kind != "gone":
        t.seg.write(st_off, start_time(pid).to_bytes(st_n, "little"))
    t.seg.write(pid_off, pid.to_bytes(pid_n, "little"))
    t.set_cause("masterPid of the frozen master's published segment forged to %s pid %d" % (kind, pid))
    cs = [t.client(n) for n in campaign.CLIENTS]
    campaign.start_all(t, cs, 0.05)
    t.sleep_until(now() + 0.4)
    try:
        still = os.stat(t.seg.path).st_ino == inode
    except OSError:
        still = False
    if not still:
        t.fail("the live (frozen) master's segment was removed or replaced after its masterPid was forged: %s"
               % "; ".join("%s: %s" % (c.name, c.tail(200)) for c in cs))
    for c in cs:
        if REMOVED_RE.search(c.stderr()):
            t.fail("client %s removed a live master's segment: %s" % (c.name, c.tail(300)))
        elif "written over" not in c.stderr():  # attached, watching the forged pid as its master's
            t.fail("client %s did not see the header written over (it attached to a segment naming pid %d, "
                   "not its master): %s" % (c.name, pid, c.tail(300)))
    b = t.master("masterB")
    b.start()
    t.sleep_until(now() + END_WITHIN_S, lambda: not b.alive())
    if b.alive() or b.returncode != 2:
        t.fail("a second master took (or hung on) the instance of a live master with a forged header: %s %s"
               % (b.status(), b.tail(300)))
    m.send(signal.SIGCONT)
    if sleeper is not None:
        sleeper.kill()
        sleeper.wait()
    return m, cs, b


def trial_tamper(t, campaign):
    variant = VARIANTS[t.index % len(VARIANTS)]
    if variant.startswith("forge"):
        m, cs, b = forge(t, campaign, variant.split("-")[1])
        if m is None or t.setup_failed:
            return
        t.check_processes(now() + END_WITHIN_S, cause_re=re.compile(r"masterPid|written over|forged|master"),
                          cause_by_any=True)
        if m.returncode != 1 or "header field 'masterPid'" not in m.text():
            t.fail("the master did not end its run naming its forged field 'masterPid': %s %s"
                   % (m.status(), m.tail(300)))
        t.outcome = campaign.label(t, variant, [("master", m), ("B", b)] + [(c.name, c) for c in cs])
        return
    m = t.master(iterations=0)
    cs = [t.client(n) for n in campaign.CLIENTS]
    campaign.start_all(t, [m] + cs, 0.1)
    if campaign.wait_state(t, {"running"}) is None:
        t.fail_setup("the run did not start: %s" % m.tail())
        return
    t.sleep_until(now() + t.rng.uniform(0, 0.2))
    if variant == "garbage":
        t.seg.write(0, os.urandom(t.ctx.layout.header_size))
        t.set_cause("random bytes over the header in the run")
    else:
        t.seg.truncate(0)
        t.set_cause("segment truncated to 0 bytes in the run")
    t.check_processes(t.cause[0] + END_WITHIN_S, cause_re=campaign.DAMAGE_RE, cause_by_any=True)
    if variant == "truncate0":
        if m.returncode != 1 or "damaged: truncated to 0 of" not in m.text() or "'head'" in m.text():
            t.fail("the master did not name the truncation (or named a ring field): %s" % m.tail(300))
        for c in cs:
            if c.returncode not in (None, 0) and ("truncated" not in c.text() or re.search(r"master died", c.text())):
                t.fail("client %s did not name the truncation (or blamed the master's death): %s"
                       % (c.name, c.tail(300)))
    t.outcome = campaign.label(t, variant, [("master", m)] + [(c.name, c) for c in cs])
