#!/usr/bin/env bash
# Lints tactus's own sources: clang-tidy (.clang-tidy, with the build's compile_commands.json) on
# the C and C++ translation units, clang-format --dry-run -Werror (.clang-format) on sources and
# headers, and the file size: no source or header of a product folder above 700 lines (issue 42).
# Exit status 1 when any finds anything, 2 on a usage or setup error.
#
#   scripts/lint.sh                 files changed against the merge base with main (and uncommitted)
#   scripts/lint.sh --all           every tracked source file
#   scripts/lint.sh FILE...         the named files
# Options: --tidy-only, --format-only (clang-format and the file size), --base REF (instead of
# main), -j N (default 2).
# TACTUS_BUILD_DIR picks the build directory (default build; set up here when missing).
# TACTUS_TIDY_CACHE=DIR keeps clang-tidy's clean verdicts there; a unit is checked again when
# anything it depends on changed (scripts/tidy_keys.py). .ci/run keeps them in its ccache folder.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=changed base=main jobs=2 tidy=1 format=1 files=()
while (($#)); do
  case "$1" in
    --all) mode=all ;;
    --base) base=${2:?--base needs a git ref}; shift ;;
    -j) jobs=${2:?-j needs a number}; shift ;;
    --tidy-only) format=0 ;;
    --format-only) tidy=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "lint: unknown option '$1'" >&2; exit 2 ;;
    *) mode=named; files+=("$1") ;;
  esac
  shift
done

# Project sources only: never the CUDA stand-in's copies of system headers or generated files.
is_source() { [[ "$1" =~ \.(c|cpp|h|hpp)$ ]] && [[ ! "$1" =~ ^(build|subprojects)/ ]]; }
case "$mode" in
  all) mapfile -t candidates < <(git ls-files) ;;
  changed)
    merge_base=$(git merge-base HEAD "$base" 2>/dev/null) || { echo "lint: no merge base with '$base' (use --base or --all)" >&2; exit 2; }
    mapfile -t candidates < <({ git diff --name-only --diff-filter=ACMR "$merge_base"; git ls-files --others --exclude-standard; } | sort -u) ;;
  named) candidates=("${files[@]}") ;;
esac
sources=()
for f in "${candidates[@]}"; do
  if is_source "$f" && [ -f "$f" ]; then sources+=("$f"); fi
done
if ((${#sources[@]} == 0)); then
  echo "lint: no C or C++ sources to check"
  exit 0
fi

# The file size: a product folder's source or header above kMaxLines is a finding (split it by what
# the code does: a pass, a role, a record kind). Tests, benchmarks and samples are not held to it.
max_lines=700
product='^(core|ipc|compiler|master|client_lib|tools|launch|check|view|soc_link)/'
# Allowed above the limit, each with why (a note says when an entry is no longer needed):
declare -A oversize_allowed=(
)

status=0
if ((format)); then
  for f in "${sources[@]}"; do
    [[ "$f" =~ $product ]] || continue
    lines=$(wc -l <"$f")
    if ((lines > max_lines)); then
      if [[ -n "${oversize_allowed[$f]:-}" ]]; then continue; fi
      echo "$f: $lines lines, above the limit of $max_lines for a product source file: split it"
      status=1
    elif [[ -n "${oversize_allowed[$f]:-}" ]]; then
      echo "lint: note: $f is $lines lines now; remove it from oversize_allowed in scripts/lint.sh"
    fi
  done
fi
if ((format)); then
  echo "lint: clang-format on ${#sources[@]} files"
  if ! clang-format --dry-run -Werror "${sources[@]}"; then
    echo "lint: clang-format: the files above differ from .clang-format (clang-format -i FILE fixes them)"
    status=1
  fi
fi

if ((tidy)); then
  builddir=${TACTUS_BUILD_DIR:-build}
  if [ ! -f "$builddir/compile_commands.json" ]; then
    meson setup "$builddir" >/dev/null || { echo "lint: meson setup $builddir failed" >&2; exit 2; }
  fi
  # Translation units in the compile database; a header is checked through the units that include
  # it (HeaderFilterRegex in .clang-tidy). With TACTUS_TIDY_CACHE (a folder; CI keeps it in its
  # ccache folder), a unit whose clang-tidy verdict was clean is not checked again while nothing it
  # depends on changed (scripts/tidy_keys.py says what: the clang-tidy version and configuration,
  # the compile command, the content of every file the unit includes).
  cache=${TACTUS_TIDY_CACHE:-}
  key_args=() deps=$(mktemp)
  if [ -n "$cache" ]; then
    ninja -C "$builddir" -t deps >"$deps" 2>/dev/null
    key_args=(--keys "$(clang-tidy --version)" "$deps")
  fi
  mapfile -t rows < <(python3 scripts/tidy_keys.py "${key_args[@]}" "$builddir/compile_commands.json" "${sources[@]}")
  rm -f "$deps"
  todo=() hits=0
  for row in "${rows[@]}"; do
    key=${row#*$'\t'}
    if [ -n "$cache" ] && [ -n "$key" ] && [ -f "$cache/${key:0:2}/$key" ]; then
      touch "$cache/${key:0:2}/$key"
      hits=$((hits + 1))
    else
      todo+=("$row")
    fi
  done
  if ((${#rows[@]})); then
    # Generated headers (tactus_config.h) must exist before clang-tidy reads the units.
    ninja -C "$builddir" tactus_config.h >/dev/null 2>&1 || true
    said=""
    [ -n "$cache" ] && said=", $hits clean before and unchanged ($cache)"
    echo "lint: clang-tidy on ${#rows[@]} translation units (-j$jobs)$said"
    outs=$(mktemp -d)
    # One unit: its findings into a file of its own; a clean verdict kept under its key. A
    # clang-tidy that ends with another status (killed, crashed, a unit it could not compile)
    # is a finding too: silence from it is not a clean verdict.
    tidy_one() {
      local unit=${1%%$'\t'*} key=${1#*$'\t'} out rc=0
      out=$(mktemp "$outs/unit.XXXXXX")
      clang-tidy -p "$builddir" --quiet "$unit" >"$out" 2>"$out.err" || rc=$?
      if [ "$rc" -ne 0 ]; then
        echo "$unit:1:1: error: clang-tidy ended with status $rc on this unit" >>"$out"
        tail -n 3 "$out.err" >>"$out"
      elif ! grep -qE '(warning|error):' "$out" && [ -n "$cache" ] && [ -n "$key" ]; then
        mkdir -p "$cache/${key:0:2}" && : >"$cache/${key:0:2}/$key"
      fi
      rm -f "$out.err"
    }
    export -f tidy_one
    export builddir cache outs
    ((${#todo[@]})) && printf '%s\n' "${todo[@]}" | xargs -P "$jobs" -d '\n' -n 1 bash -c 'tidy_one "$1"' _
    out=$(mktemp)
    cat "$outs"/unit.* >"$out" 2>/dev/null
    if grep -qE '(warning|error):' "$out"; then
      grep -E -A3 '(warning|error):' "$out"
      echo "lint: clang-tidy: $(grep -cE '(warning|error):' "$out") findings"
      status=1
    fi
    rm -rf "$out" "$outs"
    # Verdicts not used for 30 days go (a unit's key changes with every edit it sees).
    [ -n "$cache" ] && find "$cache" -type f -mtime +30 -delete 2>/dev/null
  fi
fi
[ "$status" -eq 0 ] && echo "lint: clean"
exit "$status"
