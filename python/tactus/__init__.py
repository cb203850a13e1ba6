"""tactus in Python: a run's event log as pandas DataFrames, a schedule file's tables, the
schedule manager.

    run = tactus.read_log("run.tlog", "hello.tsched")
    run.runs            # one row per run: client, runnable, iteration, frame, start_ns, end_ns, ...
    run.report()        # the dictionary tactus-report --json prints
    tactus.Schedule("hello.tsched").channel_reads

The log is read, verified and analysed by tactus-report's own code (the _tactus extension);
this module only turns its columns into DataFrames.
"""

import json as _json

import pandas as _pd

from . import _tactus
from ._tactus import Error

__all__ = ["Error", "Log", "Manager", "Recording", "Schedule", "read_log"]


_COLUMNS = {
    "runs": "schedule client runnable epoch resource iteration frame instance start_ns end_ns planned_start_ns "
            "planned_end_ns wcet_ns",
    "releases": "schedule iteration epoch frame ideal_ns actual_ns late_ns",
    "overruns": "kind where schedule iteration count planned_ns actual_ns late_ns",
    "switches": "event schedule hyperepoch iteration other at_ns",
    "chains": "chain measure source_client source_runnable source_iteration source_frame last_client "
              "last_runnable last_iteration last_frame release_ns end_ns reaction_ns age_ns planned_ns "
              "required_ns schedule",
}


def _frame(table, columns=None):
    """A DataFrame from the extension's columns (names become categoricals); an empty table still
    has its `columns`."""
    if not table["columns"] and columns:
        return _pd.DataFrame({c: _pd.Series([], dtype="int64") for c in columns.split()})
    data = {}
    for column in table["columns"]:
        if column in table["numbers"]:
            data[column] = table["numbers"][column]
        else:
            codes, categories = table["names"][column]
            data[column] = _pd.Categorical.from_codes(codes, categories=categories)
    # copy=False: the extension's arrays become the columns as they are (no consolidation copy).
    return _pd.DataFrame(data, copy=False)


class Log:
    """A run's event log read against its schedule(s), as tactus-report reads it.

    DataFrames (times in CLOCK_MONOTONIC ns, as logged):
      runs      one row per valid run, by start: schedule, client, runnable, epoch, resource,
                iteration (hyperepoch iteration), frame, instance, start_ns, end_ns,
                planned_start_ns, planned_end_ns, wcet_ns
      releases  one row per frame release, by actual time: schedule, iteration, epoch, frame,
                ideal_ns, actual_ns, late_ns
      overruns  frame overruns (kind "frame", where = epoch, count = the late frame) and skipped
                periods (kind "skip", where = hyperepoch, count = periods skipped)
      switches  schedule starts and stops of a run with a schedule manager
      chains    one row per chain occurrence: chain, measure ("reaction" or "age"), source and
                last run (client, runnable, iteration, frame), release_ns, end_ns, reaction_ns
                or age_ns (-1 for the other measure), planned_ns, required_ns (-1: none)
    """

    def __init__(self, logs, schedules):
        if not schedules:
            raise Error("read_log: give the schedule file(s) the run ran")
        self._run = _tactus.Run([str(p) for p in logs], [str(p) for p in schedules])
        tables = self._run.tables()
        self.runs = _frame(tables["runs"], _COLUMNS["runs"])
        self.releases = _frame(tables["releases"], _COLUMNS["releases"])
        self.overruns = _frame(tables["overruns"], _COLUMNS["overruns"])
        self.switches = _frame(tables["switches"], _COLUMNS["switches"])
        self.chains = _frame(tables["chains"], _COLUMNS["chains"])
        self.warnings = list(self._run.warnings)
        self.run_start_ns = self._run.run_start_ns

    def report(self):
        """The statistics as tactus-report --json prints them (a dictionary)."""
        return _json.loads(self._run.json())


def read_log(log, *schedules):
    """Reads an event log (a path, or a list of the logs of one multi-SoC run) against the
    schedule file(s) it ran; errors raise tactus.Error with tactus-report's message."""
    logs = list(log) if isinstance(log, (list, tuple)) else [log]
    return Log(logs, list(schedules))


class Schedule:
    """A compiled schedule file: instances, channels, channel_reads (which writer run each reader
    run sees), chains as DataFrames; name, identifier and the graph's names."""

    def __init__(self, path):
        d = _tactus.schedule_tables(str(path))
        self.name = d["name"]
        self.identifier = d["identifier"]
        self.instances = _frame(d["instances"])
        self.channels = _frame(d["channels"])
        self.channel_reads = _frame(d["channel_reads"])
        self.chains = _frame(d["chains"])
        self.clients = d["clients"]
        self.runnables = d["runnables"]
        self.resources = d["resources"]
        self.hyperepochs = d["hyperepochs"]
        self.epochs = d["epochs"]


_STAMPS = "soc schedule writer_instance iteration written_ns source_ns bytes"


class Recording:
    """A recording folder made by `tactus-master --record DIR` (soc<k>.trec), read by the record
    library's strict reader (tactus-report --recording's): a damaged file is refused naming the
    file and the byte offset.

      channels              the channels' names (every schedule of every SoC file)
      versions(ch)          the channel's versions in recording order, each as bytes: those
                            tactus-report --recording DIR --export-channel ch writes as .bin files
      arrays(ch, dtype)     the same versions as NumPy arrays of `dtype` (numpy.frombuffer: no
                            copy, read-only)
      stamps(ch)            a DataFrame, one row per version: soc, schedule, writer_instance,
                            iteration (the writer run's hyperepoch iteration), written_ns,
                            source_ns, bytes
      stops                 per SoC file, where and why it stops early ("" when it ends whole)
    """

    def __init__(self, path):
        self._rec = _tactus.Recording(str(path))
        self.channels = self._rec.channels()
        self.stops = self._rec.stops
        self._cache = {}

    def _versions(self, channel):
        if channel not in self._cache:
            self._cache[channel] = self._rec.versions(channel)
        return self._cache[channel]

    def versions(self, channel):
        return list(self._versions(channel)["data"])

    def arrays(self, channel, dtype="uint8"):
        import numpy  # optional: only this method needs it (python3-numpy)

        return [numpy.frombuffer(b, dtype=dtype) for b in self._versions(channel)["data"]]

    def stamps(self, channel):
        return _frame(self._versions(channel)["stamps"], _STAMPS)


class Manager:
    """The schedule manager of a master started with several schedules and -N: each call attaches,
    makes its request and detaches (as tactus-manager does), so a Manager never ends the run by
    being dropped. Errors raise tactus.Error with the master's message."""

    def __init__(self, instance, name="", timeout_ms=5000):
        self.instance = instance
        self.name = name
        self.timeout_ms = timeout_ms

    def _call(self, fn, *args):
        _tactus.manager_init(self.name, self.instance, self.timeout_ms)
        try:
            return fn(*args)
        finally:
            _tactus.manager_shutdown()

    def start(self, schedule):
        self._call(_tactus.manager_start, schedule)

    def stop(self, schedule):
        self._call(_tactus.manager_stop, schedule)

    def rollover(self, start, stop):
        self._call(_tactus.manager_rollover, start, stop)

    def status(self):
        return self._call(_tactus.manager_status)

    def exit(self):
        _tactus.manager_init(self.name, self.instance, self.timeout_ms)
        _tactus.manager_exit()  # detaches
