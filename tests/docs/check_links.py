#!/usr/bin/env python3
"""Checks every relative link of README.md, CONTRIBUTING.md and docs/**/*.md: the file (or folder)
it names exists, and a #anchor names a heading of the target (GitHub's slugs: lower case,
punctuation but '-' and '_' dropped, spaces to '-', a repeated heading gets -1, -2, ...).

  check_links.py [SOURCE_ROOT]      (default: the folder above tests/)

Prints each broken link as FILE:LINE: LINK: why, then a count; exit status 1 on any."""
import pathlib
import re
import sys

LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def lines_outside_fences(text):
    inside = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, line


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        for _, line in lines_outside_fences(path.read_text()):
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
    files = [root / "README.md", root / "CONTRIBUTING.md"] + sorted((root / "docs").rglob("*.md"))
    broken = 0
    links = 0
    for md in files:
        for number, line in lines_outside_fences(md.read_text()):
            line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
                    continue
                links += 1
                path_part, _, anchor = target.partition("#")
                dest = (md.parent / path_part).resolve() if path_part else md
                why = None
                if not dest.exists():
                    why = "no such file"
                elif anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest):
                    why = f"no heading '#{anchor}' in {dest.relative_to(root)}"
                if why:
                    broken += 1
                    print(f"{md.relative_to(root)}:{number}: {target}: {why}")
    print(f"{links} relative links in {len(files)} files, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
