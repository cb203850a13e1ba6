#!/usr/bin/env bash
# Builds tactus (installing what is missing) and runs its tests; the last line says
# `N passed, N failed, N skipped`, counted from meson's test log.
#
#   scripts/test.sh                      the whole suite in ./build (the README's test command)
#   scripts/test.sh --sanitize=address   ASan + UBSan build in ./build-asan, the whole suite but
#                                        the packaging check (it runs nothing of this build) and
#                                        DDS Security (Cyclone's plugins, slow under ASan)
#   scripts/test.sh --sanitize=thread    TSan build in ./build-tsan, the integration suite (the
#                                        real master and clients: runtime, gpu, report, samples)
#                                        but the packaging check and the browser test
#   scripts/test.sh --werror             warnings are errors (what CI builds with)
#   scripts/test.sh [options] ARGS...    other arguments go to `meson test` (names, --suite unit)
#
# Environment: TACTUS_SANITIZE (address or thread, as --sanitize), TACTUS_WERROR=1 (as --werror),
# TACTUS_BUILD_DIR (the build directory), TACTUS_JOBS (build and test jobs; default every core).
# Sanitizer findings of every process (the tests' masters and clients too) are written under
# BUILD/meson-logs/sanitizer/ and listed at the end; any finding fails the process that made it.
set -uo pipefail
cd "$(dirname "$0")/.."

sanitize=${TACTUS_SANITIZE:-} werror=${TACTUS_WERROR:-0} test_args=()
for a in "$@"; do
  case "$a" in
    --sanitize=*) sanitize=${a#--sanitize=} ;;
    --werror) werror=1 ;;
    *) test_args+=("$a") ;;
  esac
done

setup_options=()
line_tables=(-Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1)
case "$sanitize" in
  "") default_dir=build ;;
  address|address,undefined)
    default_dir=build-asan
    # b_lundef=false: libtactus is a shared library whose sanitizer runtime comes from the program.
    # No CUDA: nvcc does not take the sanitizer flags; the GPU engine runs on its stand-in anyway.
    # -O0 and line tables only (-g1): ASan + UBSan at -O1 -g compile 4-5 times slower (CPU seconds
    # for tests/switching/switching_test.cpp: 54 at -O1 -g, 29 at -O1 -g1, 11 at -O0 -g1), and this
    # build was the bulk of CI's time; reports still name file and line.
    # No benchmarks: their code is the harness's, built and run (quick) in the plain build; the
    # runtime they drive runs here in the real-process tests and the matrix.
    setup_options+=(-Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled -Dbenchmarks=false -Doptimization=0 "${line_tables[@]}")
    # Without test names: every test but suite 'packaging' (tests/downstream builds its own copies
    # of tactus with default options: a sanitized stage would repeat the plain run, two minutes)
    # and suite 'security' (DDS Security's handshakes in Cyclone's plugins took 126 s here against
    # 17 s plain; tactus's side of the link runs here in the other multi-SoC tests, the secured
    # link in the plain build).
    ((${#test_args[@]})) || test_args=(--no-suite packaging --no-suite security) ;;
  thread)
    default_dir=build-tsan
    # -O1 (TSan at -O0 runs the real-time runs too slowly), line tables only as above.
    setup_options+=(-Db_sanitize=thread -Db_lundef=false -Dcuda=disabled -Dbenchmarks=false -Doptimization=1 "${line_tables[@]}")
    # Without test names: the tests that run the real master and clients (lock-free across processes),
    # the runs across SoCs over DDS included (scripts/tsan.supp: Debian's Cyclone DDS is not built
    # with TSan, so the calls libddsc makes itself are not checked; tactus's are).
    # DDS Security ('security'): its plugins are dlopened and unloaded, which TSan's library
    # suppressions cannot follow; it runs in the plain and ASan builds. Not 'packaging' (as for
    # ASan) nor 'browser': the HTML view's test spends its time in chromium, and the tools it runs
    # (tactus-compile, tactus-report) run in the other report tests of this stage too. Nor 'record':
    # the recorder copies a channel buffer and then checks its stamp (a seqlock's read), which TSan,
    # modelling no fences, would report as the race the stamp check is there to catch.
    ((${#test_args[@]})) || test_args=(--suite integration --no-suite security --no-suite packaging --no-suite browser --no-suite record) ;;
  *) echo "test: --sanitize takes address or thread, not '$sanitize'"; echo "0 passed, 1 failed, 0 skipped"; exit 1 ;;
esac
((werror)) && setup_options+=(--werror)
builddir=${TACTUS_BUILD_DIR:-$default_dir}
export TACTUS_BUILD_DIR=$builddir

if [ -n "$sanitize" ]; then
  logs="$PWD/$builddir/meson-logs/sanitizer"
  rm -rf "$logs" && mkdir -p "$logs"
  common="halt_on_error=1:print_stacktrace=1"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:log_path=$logs/asan:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="$common:log_path=$logs/ubsan:${UBSAN_OPTIONS:-}"
  export TSAN_OPTIONS="$common:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp:log_path=$logs/tsan:${TSAN_OPTIONS:-}"
  export LSAN_OPTIONS="print_suppressions=0:suppressions=$PWD/scripts/lsan.supp:${LSAN_OPTIONS:-}"
fi

# A sanitizer build compiles only what its tests need (meson test builds their dependencies).
build_all=1
[ -n "$sanitize" ] && build_all=0
TACTUS_SETUP_BUILD=$build_all TACTUS_SETUP_OPTIONS="${setup_options[*]}" scripts/setup.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# Sanitized programs run slower; meson's default timeouts are multiplied for them.
multiplier=()
[ -n "$sanitize" ] && multiplier=(--timeout-multiplier 3)
meson test -C "$builddir" --print-errorlogs --num-processes "${TACTUS_JOBS:-$(nproc)}" "${multiplier[@]}" "${test_args[@]}"
status=$?

if [ -n "$sanitize" ] && compgen -G "$logs/*" >/dev/null; then
  # LeakSanitizer's exit-time check sometimes cannot stop a thread that is ending at that moment
  # (`==N==Unable to get registers from thread M.`): no finding, the process's own status stands.
  # A log with nothing else is shown, not counted.
  findings=0
  for f in "$logs"/*; do
    if ! grep -qv -e '^==[0-9]*==Unable to get registers from thread [0-9]*\.$' -e '^$' "$f"; then
      echo "-- $f (LeakSanitizer could not stop an ending thread; not a finding): $(head -1 "$f")"
      continue
    fi
    ((findings++ == 0)) && echo "== sanitizer findings ($logs)"
    echo "-- $f"
    head -40 "$f"
  done
  ((findings > 0)) && status=1
fi
scripts/test_summary.py "$builddir/meson-logs/testlog.json"
summary=$?
[ $status -eq 0 ] && [ $summary -eq 0 ]
