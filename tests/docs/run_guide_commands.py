#!/usr/bin/env python3
"""Runs the shell blocks of the user guide (docs/guide/*.md) as a reader would, from the source
folder with `build` as the build tree, and fails naming the page, the block's line and the command
when one does not run.

Every ```sh block runs, unless the line before its fence says why it cannot here:
`<!-- not run: REASON -->` (the reader's own program or graph, root, another machine). So a new
block is run or explained, never silently left out.

A page's blocks run in order in one folder of the page's own (a later block may use what an earlier
one wrote), which holds links to the source tree's top entries and `build`, each block in bash (-e,
pipefail), with DESTDIR and HOME in folders of the test's own (a block that installs writes nothing
outside them); what the block starts in the background (`&`) must end by itself with status
0 by the block's end (the test waits for it, 120 s at most). Two things are rewritten so that runs
of the test never meet: the instance `demo` (`-D demo`, `--instance demo`) becomes one of the
test's own, and `/tmp/` becomes a folder of the test's own.

  run_guide_commands.py SOURCE_ROOT BUILD_DIR [PAGE...]

Exit status 0 when every block ran; 1 otherwise; 2 on a usage error."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
INSTANCE = re.compile(r"(-D|--instance)(\s+)demo\b")
TIMEOUT_S = 120


def sh_blocks(text):
    """(line of the fence, body, reason it is not run or None) for each ```sh block."""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        start, lang = k + 1, m.group(1)
        previous = lines[k - 1] if k else ""
        body = []
        k += 1
        while k < len(lines) and not lines[k].startswith("```"):
            body.append(lines[k])
            k += 1
        k += 1
        if lang == "sh":
            skip = NOT_RUN.search(previous)
            yield start, "\n".join(body) + "\n", skip.group(1) if skip else None


def prepare(source, build, work):
    """A folder that looks like the source folder: links to its entries and `build`."""
    os.makedirs(work)
    for entry in os.listdir(source):
        if entry in ("build",) or entry.startswith("."):
            continue
        os.symlink(os.path.join(source, entry), os.path.join(work, entry))
    os.symlink(os.path.abspath(build), os.path.join(work, "build"))


def guarded_env(tmp):
    """The block's environment: an install goes under DESTDIR and a home of the test's own, so a
    block that installs (one a page forgot to mark) never writes outside the test's folders."""
    env = dict(os.environ)
    env["DESTDIR"] = os.path.join(tmp, "destdir")
    env["HOME"] = os.path.join(tmp, "home")
    os.makedirs(env["HOME"], exist_ok=True)
    return env


def run_block(page, line, body, work, tmp, instance):
    body = INSTANCE.sub(lambda m: m.group(1) + m.group(2) + instance, body)
    body = body.replace("/tmp/", tmp + "/")
    # A failed command ends the block at once, and what it started in the background with it.
    script = ("set -eo pipefail\ntrap 'status=$?; kill $(jobs -p) 2>/dev/null || true; exit $status' EXIT\n" + body +
              '\nfor job in $(jobs -p); do wait "$job" || { echo "a background command ended with $?"; exit 1; }; done\n')
    try:
        r = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True, timeout=TIMEOUT_S,
                           start_new_session=True, stdin=subprocess.DEVNULL, env=guarded_env(tmp))
        status, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        status = "timeout after %d s" % TIMEOUT_S
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
    subprocess.run(["pkill", "-KILL", "-f", instance], capture_output=True)
    for leftover in pathlib.Path("/dev/shm").glob("tactus_%s*" % instance):
        leftover.unlink(missing_ok=True)
    if status != 0:
        print("FAIL %s:%d: the block ended with %s\n--- block\n%s--- its output (tail)\n%s" %
              (page, line, status, body, out[-3000:]))
        return False
    print("ok   %s:%d (%d commands)" % (page, line, sum(1 for c in body.split("\n") if c.strip())))
    return True


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    source, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = sys.argv[3:] or sorted(str(p.relative_to(source)) for p in pathlib.Path(source, "docs", "guide").glob("*.md"))
    root = tempfile.mkdtemp(prefix="tactus-guide-")
    ok, ran, skipped, index = True, 0, 0, 0
    try:
        for page in pages:
            text = pathlib.Path(source, page).read_text()
            index += 1
            work, tmp = os.path.join(root, "page%d" % index), os.path.join(root, "tmp%d" % index)
            prepare(source, build, work)
            os.makedirs(tmp)
            instance = "docs%d_%d" % (os.getpid(), index)
            for line, body, reason in sh_blocks(text):
                if reason is not None:
                    skipped += 1
                    print("--   %s:%d not run: %s" % (page, line, reason))
                    continue
                ran += 1
                ok = run_block(page, line, body, work, tmp, instance) and ok
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("%d blocks ran, %d not run (each with its reason), %s" % (ran, skipped, "all ok" if ok else "FAILED"))
    if ran == 0:
        print("no block ran: the pages have no ```sh block (wrong source folder?)")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
