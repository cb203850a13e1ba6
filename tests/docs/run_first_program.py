#!/usr/bin/env python3
"""Runs the README's first program as a reader would: writes each code block that a sentence says
to save ("Save it as `hello.yaml`:") under that name, then runs the shell block after "Compile the
graph" line by line in bash (in a fresh folder where `build` is the build tree), and checks what the
block's comments promise: each `# ...` comment on a command whose output starts with a result (here
`./hello  # ran 100 hyperepoch iterations; last value read 100`) must appear in that command's output.

  run_first_program.py SOURCE_ROOT BUILD_DIR

Exit status 0 when every step ran and said what the README says; 1 otherwise, naming the step."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SAVE = re.compile(r"Save it as `([^`]+)`")
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(text):
    """(language, body, the prose before it) for each fenced block."""
    lines = text.split("\n")
    prose, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            prose.append(lines[k])
            k += 1
            continue
        body = []
        k += 1
        while k < len(lines) and not lines[k].startswith("```"):
            body.append(lines[k])
            k += 1
        yield m.group(1), "\n".join(body) + "\n", "\n".join(prose[-12:])
        prose = []
        k += 1


def commands(script):
    """The shell block's commands, continuation lines joined."""
    out, pending = [], ""
    for line in script.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip():
            out.append(line)
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    root, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    text = (root / "README.md").read_text()
    work = pathlib.Path(tempfile.mkdtemp(prefix="tactus-readme-"))
    (work / "build").symlink_to(build)
    saved, script = [], None
    for language, body, prose in blocks(text):
        m = SAVE.search(prose)
        if m:
            (work / m.group(1)).write_text(body)
            saved.append(m.group(1))
        elif language == "sh" and "Compile the graph" in prose:
            script = body
    if len(saved) < 2 or script is None:
        print("FAIL: the README's first program has no saved files or no shell block (found: %s)" % saved)
        return 1
    print("saved from the README: " + ", ".join(saved))
    background = []
    env = dict(os.environ)
    failures = 0
    for line in commands(script):
        command, _, comment = line.partition("  #")
        command = command.strip()
        if command.endswith("&"):
            background.append(subprocess.Popen(["bash", "-c", command[:-1]], cwd=work, env=env,
                                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            print("$ " + command)
            continue
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                              timeout=120)
        print("$ " + command + "\n" + (done.stdout + done.stderr).rstrip())
        if done.returncode != 0:
            print("FAIL: exit %d" % done.returncode)
            failures += 1
            break
        promise = comment.strip()
        # A comment that states a result ("ran 100 ...; last value read 100") is checked; one that
        # explains the command ("what ran, how long, ...") has a comma-free first clause too, so
        # only promises that the output can hold word for word are held: those with a digit.
        if promise and re.search(r"\d", promise) and promise not in done.stdout + done.stderr:
            print("FAIL: the README says it prints: " + promise)
            failures += 1
    for p in background:
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print("FAIL: a background command did not end")
            failures += 1
        if p.returncode != 0:
            print(out.rstrip())
            print("FAIL: a background command exited %d" % p.returncode)
            failures += 1
    print("FAIL" if failures else "PASS: the README's first program ran as written")
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept: " + str(work))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
