#!/usr/bin/env python3
"""The fuzzing reproducers (fuzz/regressions/) through the real tactus-master and tactus-report,
under a 2 GiB address-space limit and a timeout: each must end with a clear message that names
the file and line (schedule) and the documented exit status, never a signal, an out-of-memory
abort or a hang. Also a valid schedule of a million frames with a log of a few hundred
iterations: the report's tables must be sized by the records, not by iterations x frames.

usage: fuzz_regression_test.py TACTUS_MASTER TACTUS_REPORT SOURCE_ROOT
"""
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile

MEMORY_LIMIT = 2 << 30
SANITIZER = None  # set in main(): "ASAN" or "TSAN" when the programs under test were built with one
TIMEOUT_S = 30
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def sanitizer_of(program):
    # AddressSanitizer and ThreadSanitizer reserve terabytes of address space for their shadow:
    # RLIMIT_AS would stop them at start-up. Their own allocation limit (*SAN_OPTIONS below) takes
    # the bound's place there.
    with open(program, "rb") as f:
        data = f.read()
    return "ASAN" if b"__asan_init" in data else "TSAN" if b"__tsan_init" in data else None


def limited():
    if SANITIZER is None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(cmd, cwd):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S,
                              preexec_fn=limited)
    except subprocess.TimeoutExpired:
        return None


def check(name, r, code, expect):
    if r is None:
        return fail(f"{name}: still running after {TIMEOUT_S} s")
    if r.returncode < 0:
        return fail(f"{name}: killed by signal {-r.returncode}: {r.stderr[-400:]}")
    if r.returncode != code:
        return fail(f"{name}: exit status {r.returncode}, expected {code}: {r.stderr[-400:]}")
    for e in expect:
        if e not in r.stderr:
            return fail(f"{name}: the message lacks {e!r}: {r.stderr[-400:]}")
    print(f"ok: {name}: exit {code}: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else ''}")


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def write_schedule(path, body):
    h = fnv1a(body.encode())
    with open(path, "w") as f:
        f.write(body + f"content_hash {h:016x}\n")
    return h


def write_log(path, content_hash, run_start, records):
    header = b"TACTLOG\0" + struct.pack("<IIIHHQq24x", 1, 64, 32, 1, 0, content_hash, run_start)
    with open(path, "wb") as f:
        f.write(header)
        for r in records:
            f.write(struct.pack("<HHIIIqq", *r))


def main():
    master, report, root = (os.path.abspath(p) for p in sys.argv[1:4])
    global SANITIZER
    SANITIZER = sanitizer_of(master)
    if SANITIZER is not None:
        limit_mb = MEMORY_LIMIT >> 20
        name = SANITIZER + "_OPTIONS"
        os.environ[name] = os.environ.get(name, "") + f":max_allocation_size_mb={limit_mb}:allocator_may_return_null=1"
    repro = os.path.join(root, "fuzz", "regressions")
    instance = f"fuzzreg{os.getpid()}"

    master_cases = {
        "master-tsched-4e9-frames-unbounded-memory.tsched": ":7: epoch 'Huge' has 4294967294 frames",
        "master-tsched-1e8-frames-timeout.tsched": ":7: epoch 'Huge' has 100000000 frames",
        "master-tsched-frame-base-u32-wrap-heap-overflow.tsched": ":7: epoch 'Huge' has 4294967294 frames",
        "master-report-tsched-verifier-frame-slots-unbounded-memory.tsched": ":7: field 'period_ns' is 9223372036854775807",
        "master-tsched-deadline-signed-overflow.tsched": ":10: field 'deadline_ns' is 9223372036854775807",
        "master-tsched-starttime-signed-overflow.tsched": ":10: field 'start_ns' is 9223372036854775807",
    }
    for name, expect in master_cases.items():
        r = run([master, "-s", name, "-D", instance, "-t", "100000"], repro)
        check("tactus-master -s " + name, r, 2, ["tactus-master: " + name + expect])
        if os.path.exists("/dev/shm/tactus_" + instance):
            fail(f"tactus-master -s {name}: left /dev/shm/tactus_{instance} behind")

    report_cases = {
        "report-log-frame-base-u32-wrap-heap-overflow": ":7: epoch 'Huge' has 4294967294 frames",
        "report-log-frame-count-unbounded-memory": ":7: epoch 'Huge' has 4294967294 frames",
        "report-log-iteration-times-frames-unbounded-memory": ":8: epoch 'Idle' has 1000000 frames",
    }
    for name, expect in report_cases.items():
        r = run([report, name + ".tlog", name + ".tsched"], repro)
        check("tactus-report " + name, r, 1, ["tactus-report: " + name + ".tsched" + expect])

    # Times near INT64_MIN/MAX (and a header run start of INT64_MAX): invalid records, counted.
    name = "report-log-timestamp-signed-overflow"
    r = run([report, name + ".tlog", name + ".tsched", "--json"], repro)
    check("tactus-report " + name, r, 0, ["run start 9223372036854775807 ns is not a plausible",
                                          "5 records have an unknown kind"])
    if r is not None and r.returncode == 0:
        records = json.loads(r.stdout)["records"]
        if records["invalid"] != 5 or records["release"] != 0:
            fail(f"tactus-report {name}: records {records}, expected all 5 timed records invalid")

    # A valid schedule: 16 idle epochs of 65536 frames (1,048,577 frames in all) and a log that
    # names 1000 iterations: the old report sized its tables iterations x frames (16 GB).
    with tempfile.TemporaryDirectory(prefix="tactus-fuzzreg-") as tmp:
        idle = 16
        body = ("tactus-schedule 1\n"
                "schedule name=Wide identifier=1 source_hash=0000000000000001\n"
                "client id=0 name=Pipeline\n"
                "resource id=0 name=CPU0 type=CPU kind=cpu client=- hyperepoch=0 core=0 device=- stream_limit=-\n"
                "hyperepoch id=0 name=Main period_ns=1000000000 monitor_ns=- resources=0 epochs=" +
                ",".join(str(e) for e in range(idle + 1)) + "\n"
                "epoch id=0 name=Frame hyperepoch=0 period_ns=1000000000 frames=1\n" +
                "".join(f"epoch id={e} name=Idle{e} hyperepoch=0 period_ns=1 frames=65536\n"
                        for e in range(1, idle + 1)) +
                "runnable id=0 name=Read client=0 epoch=0 kind=cpu wcet_ns=500000 start_ns=0 deadline_ns=- "
                "end_monitor_ns=- priority=10 deps= submits=- submitted_by=- alias_group=- steps=\n"
                "instance id=0 runnable=0 frame=0 start_ns=0 end_ns=500000 resources=0 deps=\n"
                "timeline resource=0 instances=0\n")
        sched, log = os.path.join(tmp, "wide.tsched"), os.path.join(tmp, "wide.tlog")
        content_hash = write_schedule(sched, body)
        t0 = 10**12
        records = []
        for it in range(1000):
            start = t0 + it * 10**9
            records.append((2, 0, 0, it, 0, start, start + 1000))            # release of frame 0
            records.append((1, 0, 0, it, 0, start + 1000, start + 401000))   # run of Read
        write_log(log, content_hash, t0, records)
        r = run([report, log, sched, "--csv"], tmp)
        check("tactus-report on a million frames x 1000 iterations", r, 0, [])
        if r is not None and r.returncode == 0:
            rows = r.stdout.strip().splitlines()
            if len(rows) != 1001:
                fail(f"tactus-report --csv on the wide schedule: {len(rows) - 1} runs, expected 1000")

    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)


if __name__ == "__main__":
    main()
