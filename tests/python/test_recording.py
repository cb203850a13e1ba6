"""tactus.Recording against tactus-report on a real recorded run: the real master with --record
and the real clients (tactus-test-client) run tests/channels/race.yaml (channel D, Writer.W ->
Reader.R); every version tactus.Recording hands out, as bytes and as a NumPy array, must equal the
.bin file tactus-report --recording DIR --export-channel D writes for it, and its stamps the
exported CSV's rows; a channel the recording lacks is a tactus.Error naming the ones it has.

Run by meson (tests/python/meson.build) like test_tactus.py.
"""
import glob
import os
import subprocess

import pandas as pd
import pytest

import tactus

REPORT = os.environ.get("TACTUS_REPORT_BIN", "")
COMPILE = os.environ.get("TACTUS_COMPILE_BIN", "")
MASTER = os.environ.get("TACTUS_MASTER_BIN", "")
CLIENT = os.environ.get("TACTUS_TEST_CLIENT_BIN", "")
ROOT = os.environ.get("TACTUS_SOURCE_ROOT", "")
ITERATIONS = 30


def run(argv, timeout=60):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(argv)}: exit {r.returncode}: {r.stdout}{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rec")
    sched = str(tmp / "race.tsched")
    run([COMPILE, "-q", "-i", os.path.join(ROOT, "tests", "channels", "race.yaml"), "-o", sched])
    instance = f"pyrec{os.getpid()}"
    rec = str(tmp / "rec")
    master = subprocess.Popen([MASTER, "-C", "-s", sched, "-e", str(ITERATIONS), "-D", instance, "--record", rec],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    clients = [subprocess.Popen([CLIENT, "--name", n, "--instance", instance, "--busy-us", "200", "--timeout-ms",
                                 "20000", "--channel", "D"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True) for n in ("Writer", "Reader")]
    try:
        outs = [p.communicate(timeout=60)[0] for p in clients + [master]]
    finally:
        for p in clients + [master]:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in clients + [master]), "\n".join(outs)
    out = str(tmp / "export")
    run([REPORT, "--recording", rec, "--export-channel", "D", "--export-dir", out])
    return rec, out


def test_versions_equal_the_export(recorded):
    rec, out = recorded
    r = tactus.Recording(rec)
    assert r.channels == ["D"]
    assert r.stops == [""]
    stamps = r.stamps("D")
    versions = r.versions("D")
    exported = pd.read_csv(os.path.join(out, "D.csv"))
    assert len(versions) == len(stamps) == len(exported) > ITERATIONS // 2
    for column in ("soc", "schedule", "writer_instance", "iteration", "written_ns", "source_ns", "bytes"):
        assert stamps[column].tolist() == exported[column].tolist(), column
    files = glob.glob(os.path.join(out, "D_*.bin"))
    assert len(files) == len(versions)
    for k, row in stamps.iterrows():
        path = os.path.join(out, f"D_{row['iteration']}_{row['writer_instance']}.bin")
        with open(path, "rb") as f:
            expected = f.read()
        assert versions[k] == expected, f"version {k} (iteration {row['iteration']}) differs from {path}"
        assert len(versions[k]) == row["bytes"]


def test_arrays(recorded):
    np = pytest.importorskip("numpy")
    r = tactus.Recording(recorded[0])
    arrays = r.arrays("D", dtype=np.uint32)
    versions = r.versions("D")
    assert len(arrays) == len(versions)
    for a, b in zip(arrays, versions):
        assert a.dtype == np.uint32 and a.tobytes() == b


def test_unknown_channel_and_folder(recorded, tmp_path):
    r = tactus.Recording(recorded[0])
    with pytest.raises(tactus.Error, match="no channel 'E'.*channels: D"):
        r.versions("E")
    with pytest.raises(tactus.Error, match=str(tmp_path)):
        tactus.Recording(tmp_path)
