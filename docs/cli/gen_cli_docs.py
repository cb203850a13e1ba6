#!/usr/bin/env python3
"""Man pages and bash completion for the tactus tools, generated from their --help (like help2man,
which Debian has but this build does not require).

  gen_cli_docs.py man TOOL_BINARY OUTPUT.1
  gen_cli_docs.py completion OUTPUT TOOL_BINARY...
"""
import re
import subprocess
import sys

# An option line: short spellings, the long name, its value's name (`FILE`, `KIND[:CALL]`, `on|off`), help.
OPTION = re.compile(r"^  ((?:-[A-Za-z]+, )*)--([a-z][a-z0-9-]*)(?: (\S+))?(?:\s{2,}(.*))?$")

# A key of a file format section (tactus-launch's `launch file:`): `  key: VALUE` then its help.
FILE_KEY = re.compile(r"^  ([a-z_]+: \S+(?: \S+)*?)\s{2,}(\S.*)$")


def run(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def name_of(binary):
    return binary.rstrip("/").split("/")[-1]


def options(help_text):
    """(short spellings, long name, value name) of each option line of the help."""
    found = []
    for line in help_text.splitlines():
        m = OPTION.match(line)
        if m:
            shorts = [s for s in m.group(1).split(", ") if s]
            found.append((shorts, m.group(2), m.group(3) or ""))
    return found


def roff(text):
    text = text.replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + l if l.startswith((".", "'")) else l) for l in text.split("\n"))


def man(binary, output):
    tool = name_of(binary)
    help_text = run(binary, "--help")
    version = run(binary, "--version").strip()
    lines = help_text.rstrip("\n").split("\n")
    usage = [lines[0][len("usage: "):]]
    k = 1
    while k < len(lines) and re.match(r"^ {7}\S", lines[k]):  # further usage lines
        usage.append(lines[k].strip())
        k += 1
    out = [f'.TH "{tool.upper()}" "1" "" "{roff(version)}" "User Commands"', ".SH NAME",
           f"{tool} \\- {roff(summary(tool))}", ".SH SYNOPSIS"]
    for u in usage:
        out += [".PP", roff(u)]
    out.append(".SH DESCRIPTION")
    section = None
    paragraph = []

    def flush():
        if paragraph:
            out.extend([".PP", roff(" ".join(paragraph))])
            paragraph.clear()

    for line in lines[k:]:
        if not line.strip():
            flush()
            continue
        if re.match(r"^[a-z][a-z ]*:$", line):  # `options:`, `examples:`
            flush()
            section = line[:-1].upper()
            out.append(f".SH {section}")
            continue
        m = OPTION.match(line)
        if section == "OPTIONS" and m:
            names = m.group(1) + "--" + m.group(2) + (" " + m.group(3) if m.group(3) else "")
            out += [".TP", f"\\fB{roff(names)}\\fR"]
            if m.group(4):
                out.append(roff(m.group(4).strip()))
        elif section == "OPTIONS" and line.startswith("   "):
            out.append(roff(line.strip()))  # the option's help goes on
        elif section == "LAUNCH FILE" and FILE_KEY.match(line):  # `  key: VALUE   what it does`
            flush()
            m = FILE_KEY.match(line)
            out += [".TP", f"\\fB{roff(m.group(1))}\\fR", roff(m.group(2))]
        elif section == "LAUNCH FILE" and line.startswith("     "):
            out.append(roff(line.strip()))  # the key's help goes on
        elif section in ("EXAMPLES", "COMMANDS"):
            out += [".IP", roff(line.strip())]
        elif line.startswith("exit status:"):
            flush()
            out += [".SH EXIT STATUS", roff(line[len("exit status:"):].strip())]
        else:
            paragraph.append(line.strip())
    flush()
    out += [".SH SEE ALSO", "tactus\\-compile(1), tactus\\-master(1), tactus\\-manager(1), tactus\\-top(1), tactus\\-report(1), tactus\\-check(1)", ""]
    with open(output, "w") as f:
        f.write("\n".join(out))


def summary(tool):
    return {
        "tactus-compile": "compile a YAML compute graph into a verified static schedule file",
        "tactus-report": "statistics, measured WCETs, traces and pictures from a tactus event log",
        "tactus-master": "run a compiled tactus schedule across its client processes",
        "tactus-manager": "start, stop and roll over the schedules of a running tactus master",
        "tactus-top": "a live view of a running tactus instance: iterations, clients, durations against WCET",
        "tactus-check": "run a tactus client in check mode: report what its runnables must not do",
        "tactus-launch": "run a tactus master and its clients from one YAML file, or write their systemd units",
    }.get(tool, "a tactus tool")


def completion(output, binaries):
    out = ["# bash completion for the tactus tools, generated from their --help (docs/cli/gen_cli_docs.py)."]
    for binary in binaries:
        tool = name_of(binary)
        fn = "_" + tool.replace("-", "_")
        opts = options(run(binary, "--help"))
        words = []
        valued = []
        for shorts, long, value in opts:
            words += shorts + ["--" + long]
            if value:
                valued += shorts + ["--" + long]
        files = [w for shorts, long, value in opts if value == "FILE" for w in shorts + ["--" + long]]
        out += [
            f"{fn}() {{",
            '  local cur=${COMP_WORDS[COMP_CWORD]} prev=""',
            '  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}',
            "  case $prev in",
            f"    {'|'.join(files) or '--no-such-option'}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;",
            f"    {'|'.join(v for v in valued if v not in files) or '--no-such-option'}) COMPREPLY=(); return ;;",
            "  esac",
            '  if [[ $cur == -* ]]; then',
            f"    COMPREPLY=($(compgen -W \"{' '.join(words)}\" -- \"$cur\"))",
            "  else",
            '    COMPREPLY=($(compgen -f -- "$cur"))',
            "  fi",
            "}",
            f"complete -o filenames -F {fn} {tool}",
        ]
    with open(output, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "man":
        man(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "completion":
        completion(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
