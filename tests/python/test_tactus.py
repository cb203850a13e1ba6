"""The Python package against tactus-report on real runs: the real master and real client
processes (tactus-test-client) run a chain schedule (one schedule) and two modes under a schedule
manager driven from Python (tactus.Manager); every figure of tactus.read_log must equal
tactus-report's on the same log: the runs, releases and chain occurrences row by row against
--csv / --csv-of, report() against --json, overruns against the JSON's records, per-runnable
counts and quantiles computed in pandas against the JSON's, and tactus.Schedule against the
schedule file.

Run by meson (tests/python/meson.build) with PYTHONPATH=build/python and TACTUS_* naming the
programs; with pytest from Debian (python3-pytest).
"""
import io
import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

import tactus

REPORT = os.environ.get("TACTUS_REPORT_BIN", "")
COMPILE = os.environ.get("TACTUS_COMPILE_BIN", "")
MASTER = os.environ.get("TACTUS_MASTER_BIN", "")
CLIENT = os.environ.get("TACTUS_TEST_CLIENT_BIN", "")
ROOT = os.environ.get("TACTUS_SOURCE_ROOT", "")
ITERATIONS = 12


def run(argv, timeout=60):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(argv)}: exit {r.returncode}: {r.stderr}"
    return r.stdout


def real_run(tmp, instance, schedules, clients, managed=None):
    """The real master and clients; `managed(instance)` drives a run started with -N."""
    log = str(tmp / "run.tlog")
    argv = [MASTER, "-s", ",".join(schedules), "-D", instance, "-l", log, "-t", "20000000", "-C"]
    argv += ["-N", "mgr"] if managed else ["-e", str(ITERATIONS)]
    master = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    procs = [subprocess.Popen([CLIENT, "--name", n, "--instance", instance, "--timeout-ms", "30000", "--busy-us",
                               "200"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for n in clients]
    try:
        if managed:
            managed(instance)
        out, _ = master.communicate(timeout=90)
        for p in procs:
            p.communicate(timeout=30)
    finally:
        for p in [master] + procs:
            if p.poll() is None:
                p.kill()
    assert master.returncode == 0, out
    return log


def csv_frame(*args):
    return pd.read_csv(io.StringIO(run([REPORT] + list(args))), keep_default_na=False)


def same_rows(ours, theirs, columns, what):
    """Row by row, in order: our DataFrame's `columns` against tactus-report's CSV's."""
    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows, tactus-report {len(theirs)}"
    assert len(ours) > 0, f"{what}: no rows"
    for mine, report in columns.items():
        a = ours[mine].astype(str).tolist()
        b = theirs[report].astype(str).tolist()
        diff = [k for k in range(len(a)) if a[k] != b[k]]
        assert not diff, f"{what}.{mine}: row {diff[0]}: {a[diff[0]]} != tactus-report's {b[diff[0]]}"


def check_log(log, schedules):
    """Every figure of read_log against tactus-report's on `log`."""
    got = tactus.read_log(log, *schedules)
    several = len(schedules) > 1
    # --json: the same dictionary.
    stats = json.loads(run([REPORT, log] + schedules + ["--json"]))
    assert got.report() == stats
    # Runs, releases, chain occurrences: row by row against --csv / --csv-of.
    runs = csv_frame(log, *schedules, "--csv")
    same_rows(got.runs, runs, {"frame": "frame", "iteration": "hyperepoch", "epoch": "epoch", "client": "client",
                               "runnable": "runnable", "resource": "resource", "start_ns": "start_ns",
                               "end_ns": "end_ns", "schedule": "schedule"}, "runs")
    releases = csv_frame(log, *schedules, "--csv", "--csv-of", "releases")
    same_rows(got.releases, releases, {c: c for c in ("iteration", "epoch", "frame", "ideal_ns", "actual_ns", "late_ns",
                                                      "schedule")}, "releases")
    chains = csv_frame(log, *schedules, "--csv", "--csv-of", "chains")
    if len(chains):
        value = got.chains["reaction_ns"].where(got.chains["measure"] == "reaction", got.chains["age_ns"])
        same_rows(got.chains.assign(value_ns=value),
                  chains, {c: c for c in ("chain", "measure", "source_client", "source_runnable", "source_iteration",
                                          "source_frame", "last_client", "last_runnable", "last_iteration",
                                          "last_frame", "release_ns", "end_ns", "value_ns", "planned_ns")}, "chains")
    # Figures computed in pandas from the DataFrames against the JSON's.
    for part in stats["schedules"] if several else [stats]:
        ident = part["identifier"] if several else None
        mine = got.runs if ident is None else got.runs[got.runs["schedule"] == ident]
        for rs in part["runnables"]:
            client, name = rs["name"].split(".", 1)
            d = mine[(mine["client"] == client) & (mine["runnable"] == name)]
            dur = (d["end_ns"] - d["start_ns"]).sort_values().tolist()
            late = (d["start_ns"] - d["planned_start_ns"]).sort_values().tolist()
            assert len(dur) == rs["duration"]["count"], rs["name"]
            if dur:  # nearest-rank median, as tactus-report's
                assert [dur[0], dur[(len(dur) - 1) // 2], dur[-1]] == \
                    [rs["duration"][k] for k in ("min_ns", "median_ns", "max_ns")], rs["name"]
                assert [late[0], late[(len(late) - 1) // 2], late[-1]] == \
                    [rs["start_jitter"][k] for k in ("min_ns", "median_ns", "max_ns")], rs["name"]
        overruns = got.overruns if ident is None else got.overruns[got.overruns["schedule"] == ident]
        assert (overruns["kind"] == "frame").sum() == part["records"]["overrun"]
        assert (overruns["kind"] == "skip").sum() == part["records"]["skipped"]
    # Planned starts: each run's plan from its iteration's start.
    assert (got.runs["planned_end_ns"] - got.runs["planned_start_ns"] >= 0).all()
    return got


@pytest.fixture(scope="module")
def chain_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chain")
    sched = str(tmp / "chain.tsched")
    run([COMPILE, "-i", os.path.join(ROOT, "schedules", "camera_pipeline_chain.yaml"), "-o", sched])
    log = real_run(tmp, f"py{os.getpid()}", [sched], ["Sensing", "Planning"])
    return log, sched


def test_read_log_equals_tactus_report(chain_run):
    log, sched = chain_run
    got = check_log(log, [sched])
    assert len(got.runs) == ITERATIONS * (3 * 4 + 2 * 2)
    assert len(got.releases) == ITERATIONS * (4 + 2)
    assert set(got.chains["measure"]) == {"reaction", "age"}
    assert (got.chains.loc[got.chains["measure"] == "reaction", "reaction_ns"] > 0).all()


def test_schedule_tables(chain_run):
    _, sched = chain_run
    s = tactus.Schedule(sched)
    assert s.identifier == 30 and s.name == "CameraPipelineChain"
    assert len(s.instances) == 3 * 4 + 2 * 2
    assert "Sensing.Detect" in s.runnables and s.clients == ["Sensing", "Planning"]
    assert s.channels["channel"].tolist() == ["Objects"]
    reads = s.channel_reads
    assert len(reads) == 2 and set(reads["writer"]) == {"Sensing.Detect"}  # one per Plan frame
    assert s.chains["runnables"].iloc[0].startswith("Sensing.Capture ->")
    assert s.chains["reaction_ns"].iloc[0] > 0


def test_errors_are_exceptions_with_the_message(chain_run, tmp_path):
    log, sched = chain_run
    with pytest.raises(tactus.Error, match="nowhere.tlog"):
        tactus.read_log(str(tmp_path / "nowhere.tlog"), sched)
    with pytest.raises(tactus.Error, match="nowhere.tsched"):
        tactus.Schedule(str(tmp_path / "nowhere.tsched"))


def mode_yaml(ident, extra):
    y = (f"Version: 3.0.0\nMode{ident}:\n  Identifier: {ident}\n  Resources:\n    CPU: [CPU0, CPU1]\n"
         "  Hyperepochs:\n    - H0:\n        Period: 2000us\n        Resources: [CPU0, CPU1]\n"
         "        Epochs:\n          - E: {Period: 2000us}\n  Clients:\n"
         "    - Client0:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
         "                - R0: {WCET: 500us, Resources: [CPU0]}\n"
         "    - Client1:\n        Epochs:\n          - H0.E:\n              Runnables:\n"
         "                - R0: {WCET: 500us, Resources: [CPU1], Dependencies: [Client0.R0]}\n")
    if extra:
        y += "                - Extra: {WCET: 300us, Resources: [CPU1], Dependencies: [Client1.R0]}\n"
    return y


def test_manager_and_several_schedules(tmp_path):
    schedules = []
    for ident, extra in ((101, False), (102, True)):
        (tmp_path / f"m{ident}.yaml").write_text(mode_yaml(ident, extra))
        schedules.append(str(tmp_path / f"m{ident}.tsched"))
        run([COMPILE, "-i", str(tmp_path / f"m{ident}.yaml"), "-o", schedules[-1]])
    seen = {}

    def drive(instance):
        m = tactus.Manager(instance, timeout_ms=15000)
        m.start(101)
        time.sleep(0.2)
        seen["running"] = m.status()
        with pytest.raises(tactus.Error, match="999"):
            m.start(999)  # no such schedule: the master's message
        m.rollover(102, 101)
        time.sleep(0.2)
        seen["after"] = m.status()
        m.exit()

    log = real_run(tmp_path, f"pym{os.getpid()}", schedules, ["Client0", "Client1"], managed=drive)
    assert seen["running"]["running"] and seen["running"]["schedule"] == 101
    assert seen["running"]["schedule_count"] == 2
    assert seen["after"]["schedule"] == 102
    got = check_log(log, schedules)
    assert set(got.runs["schedule"]) == {101, 102}
    assert {"start", "stop"} <= set(got.switches["event"])
    assert "Extra" in set(got.runs.loc[got.runs["schedule"] == 102, "runnable"])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
