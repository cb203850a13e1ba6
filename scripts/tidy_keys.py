#!/usr/bin/env python3
# tidy_keys.py: for scripts/lint.sh, the translation units among FILES (those in the build's
# compile_commands.json), one a line as `UNIT<TAB>KEY`. With --keys, KEY names what clang-tidy's
# verdict on the unit depends on, so that a clean verdict can be kept across runs (TACTUS_TIDY_CACHE):
# a SHA-256 over the clang-tidy version, every .clang-tidy from the unit's folder up to the source
# root, the unit's compile commands and the path and content of every file the unit includes
# (system headers too) as ninja recorded it from the compiler's depfile (`ninja -t deps`). KEY is
# empty where ninja has no current record (a unit not built since it changed): such a unit is always
# checked. The records are the last build's: lint.sh --all runs after a full build in CI, where
# they are current; a header edited since the build changes the key all the same (its content is
# hashed).
#
#   tidy_keys.py [--keys VERSION_TEXT NINJA_DEPS_DUMP] COMPILE_COMMANDS_JSON FILE...
import hashlib
import json
import os
import shlex
import sys

content_hashes = {}


def file_hash(path):
    if path not in content_hashes:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        content_hashes[path] = h.hexdigest()
    return content_hashes[path]


def ninja_deps(path):
    """`ninja -t deps` output: {output: [included files]} for the records ninja calls VALID."""
    deps, current = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("    ") and current is not None:
                deps[current].append(line.strip())
            elif ": #deps " in line:
                name, _, state = line.partition(": #deps ")
                current = name if state.rstrip().endswith("(VALID)") else None
                if current is not None:
                    deps[current] = []
    return deps


def unit_key(version, deps, root, unit, entries):
    h = hashlib.sha256()
    h.update(version.encode())
    folder = os.path.dirname(os.path.realpath(unit))
    while True:
        config = os.path.join(folder, ".clang-tidy")
        if os.path.isfile(config):
            h.update(("config %s %s\n" % (os.path.relpath(config, root), file_hash(config))).encode())
        if folder == root or folder == os.path.dirname(folder):
            break
        folder = os.path.dirname(folder)
    for e in sorted(entries, key=lambda e: e.get("output", "")):
        build = e["directory"]
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        # The clone's and the build's folders do not count (CI checks out anywhere).
        h.update(("command %s\n" % " ".join(args).replace(build, "<build>").replace(root, "<source>")).encode())
        included = deps.get(e.get("output", ""))
        if not included:
            return ""
        try:
            for d in included:
                path = os.path.realpath(os.path.join(build, d))
                shown = os.path.relpath(path, root) if path.startswith(root + os.sep) else path
                h.update(("file %s %s\n" % (shown, file_hash(path))).encode())
        except OSError:
            return ""
    return h.hexdigest()


def main():
    argv = sys.argv[1:]
    version = deps = None
    if argv[:1] == ["--keys"]:
        version, deps, argv = argv[1], ninja_deps(argv[2]), argv[3:]
    db_path, files = argv[0], argv[1:]
    root = os.path.realpath(os.getcwd())
    by_file = {}
    for e in json.load(open(db_path)):
        by_file.setdefault(os.path.realpath(os.path.join(e["directory"], e["file"])), []).append(e)
    for f in files:
        entries = by_file.get(os.path.realpath(f))
        if entries:
            print("%s\t%s" % (f, unit_key(version, deps, root, f, entries) if version is not None else ""))


if __name__ == "__main__":
    main()
