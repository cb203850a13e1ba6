#!/usr/bin/env bash
# device-check: one command that proves the GPU path and measures the runtime on a machine lent
# with a GPU (the workplace's `device` tool: one H100/H200, 16 cores, nothing reachable), within
# about 4 minutes, fetching nothing. On a machine without a GPU it runs the parts that need none
# and says of every other part why it was skipped, so CI runs it too (--quick).
#
#   scripts/device-check.sh --prepare        here: build ./build (or --build DIR) with the CUDA runtime,
#                                            then pack what the check runs into ./.device (the
#                                            programs, the shared libraries a bare machine may lack,
#                                            the STG graphs from ../shared): carry `.device` there
#   scripts/device-check.sh [--out DIR]      there (or here): run every part, write DIR/summary.txt
#                                            (figures, one line each) and DIR/device-check.log
#   options: --build DIR   the build to run (default: .device/build when packed, else ./build)
#            --data DIR    the STG-50 folder (default: .device/stg50, else ../shared/data/stg50)
#            --quick       the short versions of the benchmarks (CI's dry run)
#            --only LIST   only these parts (comma-separated names from the list below)
#
# The parts, in order (each bounded by `timeout`; a part that cannot run says why):
#   probe      nvidia-smi, the driver against the CUDA 13 runtime, 64-bit stream memory operations
#   gpu-tests  tests/gpu's cases with the real-kernel client on the device (tests/gpu/run_real.sh)
#   sample     STM's two-process GPU sample for 100 frames of 100 ms (10 s), its event log checked
#              for order against the schedule (tactus-check-log: dependencies, GPU stamps included)
#   fence      gpu-fence-latency: GPU -> GPU across processes (fence vs IPC event), and CPU <-> GPU
#   submit     gpu-submit-bench: the engine's CPU cost per submitter (on the CUDA stand-in)
#   runtime    stg-makespan at 1 ms, 100 us and 10 us units, the hand-off and release benchmarks
# The benchmarks' workers pin themselves to cores 0 and 1; on a machine of more than 3 cores this
# script keeps itself and everything it starts off those two (taskset), so the workers' cores are
# otherwise idle. Exit status: 0 when no part failed (skipped parts are not failures), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=run quick=0 out="" build="" data="" only=""
while (($#)); do
  case "$1" in
    --prepare) mode=prepare ;;
    --quick) quick=1 ;;
    --out) out=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --data) data=${2:-}; shift ;;
    --only) only=,${2:-},; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "device-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# ---------------------------------------------------------------------------------------------
# --prepare: build with CUDA and pack .device (run here, on the machine with the toolchain).
if [ "$mode" = prepare ]; then
  set -e
  bdir=${build:-${TACTUS_BUILD_DIR:-build}}
  TACTUS_BUILD_DIR=$bdir TACTUS_SETUP_OPTIONS="-Dcuda=enabled -Dbenchmarks=true -Dtests=enabled" scripts/setup.sh
  pack=.device
  rm -rf "$pack" && mkdir -p "$pack/build" "$pack/lib" "$pack/stg50/graphs"
  # The programs and shared libraries the check runs (not the object folders), at the same
  # relative paths: their RPATHs ($ORIGIN/...) and the tests' TACTUS_BUILD_ROOT rely on the layout.
  (cd "$bdir" && find compiler master client_lib tests/gpu tests/support samples/cuda bench/gpu bench/runtime \
    -path '*.p' -prune -o \( -type f -perm -u+x -o -name '*.so*' \) -print) | while read -r f; do
    mkdir -p "$pack/build/$(dirname "$f")"
    cp -P -p "$bdir/$f" "$pack/build/$f"  # -P: the soname links (libtactus.so.0) stay links
    [ -L "$pack/build/$f" ] && continue
    case "$(head -c4 "$pack/build/$f" | od -An -c | tr -d ' ')" in
      177ELF) strip --strip-debug "$pack/build/$f" 2>/dev/null || true ;;
    esac
  done
  # The shared libraries the programs need beyond the C library and the driver: a bare image may
  # have none of yaml-cpp, Boost, Cyclone DDS or this CUDA runtime.
  find "$pack/build" -type f -perm -u+x -exec ldd {} + 2>/dev/null | awk '/=> \//{print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda|libnvidia[^/]*)\.so' |
    grep -vE "^($root/)?($bdir|$pack)/" | while read -r lib; do cp -L "$lib" "$pack/lib/"; done
  stg=${data:-../shared/data/stg50}
  cp "$stg"/graphs/rand00[0-9][0-9].stg "$pack/stg50/graphs/"
  git rev-parse HEAD >"$pack/commit"
  echo "device-check: packed $(du -sh "$pack" | cut -f1) into $pack (carry it: run's carry [\".device\"])"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# The run.
if [ -z "$build" ]; then
  if [ -d .device/build ]; then build=.device/build; else build=${TACTUS_BUILD_DIR:-build}; fi
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "device-check: no build at '$build' (build first, or --prepare)" >&2; exit 2; }
if [ -z "$data" ]; then
  if [ -d .device/stg50 ]; then data=.device/stg50; else data=../shared/data/stg50; fi
fi
data=$(cd "$data" 2>/dev/null && pwd) || data=""
[ -d .device/lib ] && export LD_LIBRARY_PATH="$root/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${out:-${OUT:-$root/device-check-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt log=$out/device-check.log
: >"$summary"
: >"$log"
work=$(mktemp -d /tmp/tactus-device-check.XXXXXX)
trap 'rm -rf "$work"' EXIT

export TACTUS_SOURCE_ROOT=$root TACTUS_BUILD_ROOT=$build
export CYCLONEDDS_URI=file://$root/samples/multisoc/loopback.xml
cores=$(nproc)
if ((cores > 3)); then taskset -pc "2-$((cores - 1))" $$ >/dev/null 2>&1 || true; fi

failed=0
say() { echo "$*" | tee -a "$summary"; }
# part NAME SECONDS COMMAND...: runs COMMAND with its output in the log and in $work/NAME.out;
# returns its exit status (124: ran past SECONDS).
part() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "== $name: $*" >>"$log"
  timeout --kill-after=5 "$limit" "$@" >"$work/$name.out" 2>&1
  local rc=$?
  cat "$work/$name.out" >>"$log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s" >>"$log"
  return $rc
}
fail() { failed=1; say "$1: FAILED: $2"; }
skip() { say "$1: skipped: $2"; }
have() { [ -x "$build/$1" ]; }
limit() { if ((quick)); then echo "$1"; else echo "$2"; fi; }
want() { [ -z "$only" ] || [[ $only == *",$1,"* ]]; }
for p in ${only//,/ }; do
  case $p in probe|gpu-tests|sample|fence|submit|runtime) ;; *) echo "device-check: --only: unknown part '$p'" >&2; exit 2 ;; esac
done

say "# tactus device check $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(cat .device/commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
say "# machine: $(uname -r), $cores cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo); build $build"

# probe ---------------------------------------------------------------------------------------
gpu=0
if command -v nvidia-smi >/dev/null 2>&1; then
  if part nvidia-smi 30 env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; then
    say "probe.nvidia-smi: $(head -1 "$work/nvidia-smi.out")"
  else
    fail probe.nvidia-smi "$(tail -1 "$work/nvidia-smi.out")"
  fi
else
  skip probe.nvidia-smi "nvidia-smi not found (no NVIDIA driver on this machine)"
fi
if ! have bench/gpu/gpu-device-probe; then
  skip probe.cuda "this build has no CUDA (nvcc and libcudart not found at setup; -Dcuda)"
else
  part probe 30 "$build/bench/gpu/gpu-device-probe"
  case $? in
    0) gpu=1; say "probe.cuda: ok: $(grep -E '^(driver|device 0)' "$work/probe.out" | paste -sd ';' -)" ;;
    77) skip probe.cuda "$(head -1 "$work/probe.out")" ;;
    *) fail probe.cuda "$(grep FAIL "$work/probe.out" | head -1)" ;;
  esac
fi
nogpu="no usable CUDA device (see probe)"

# gpu-tests -----------------------------------------------------------------------------------
if want gpu-tests; then
  if ((gpu)) && have tests/gpu/tactus-gpu-real-client && have tests/gpu/gpu_tests; then
    TACTUS_GPU_CLIENT=$build/tests/gpu/tactus-gpu-real-client part gpu-tests "$(limit 120 150)" \
      bash tests/gpu/run_real.sh "$build/tests/gpu/tactus-gpu-real-client" "$build/tests/gpu/gpu_tests"
    rc=$?
    result=$(grep -E 'All tests passed|test cases:' "$work/gpu-tests.out" | tail -1)
    if [ $rc -eq 0 ]; then say "gpu-tests: passed: $result"; else fail gpu-tests "exit $rc: ${result:-$(tail -1 "$work/gpu-tests.out")}"; fi
  elif ((gpu)); then
    fail gpu-tests "the real-GPU test client is not in the build"
  else
    skip gpu-tests "$nogpu"
  fi
fi

# sample --------------------------------------------------------------------------------------
if want sample; then
  if ((gpu)) && have samples/cuda/tactus-sample-stm-gpu && have tests/support/tactus-check-log; then
    frames=$(limit 20 100)
    inst=devcheck$$
    sched=$work/stm_gpu.tsched slog=$work/stm_gpu.tlog
    if ! part sample-compile 60 "$build/compiler/tactus-compile" -i schedules/stm_two_process_gpu.yaml -o "$sched"; then
      fail sample "tactus-compile: $(tail -1 "$work/sample-compile.out")"
    else
      # The master and both clients; the master ends after $frames hyperepoch iterations of 100 ms.
    # The order check compares GPU work's stamps (%globaltimer moved onto CLOCK_MONOTONIC by an
    # offset each client measures at start, to within half its tightest bracket) with CPU times:
    # such an order holds to within 20 us, and the check prints how far the largest was off.
      "$build/master/tactus-master" -s "$sched" -e "$frames" -l "$slog" -D "$inst" >"$work/sample-master.out" 2>&1 &
      master=$!
      TACTUS_INSTANCE=$inst "$build/samples/cuda/tactus-sample-stm-gpu" clientGpuY >"$work/sample-y.out" 2>&1 &
      y=$!
      TACTUS_INSTANCE=$inst "$build/samples/cuda/tactus-sample-stm-gpu" clientGpuX >"$work/sample-x.out" 2>&1 &
      x=$!
      deadline=$((SECONDS + frames / 10 + 30))
      for p in $master $y $x; do
        while kill -0 "$p" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
        kill -9 "$p" 2>/dev/null
      done
      wait "$master"; mrc=$?
      wait "$y"; yrc=$?
      wait "$x"; xrc=$?
      for f in sample-master sample-y sample-x; do echo "== $f" >>"$log"; cat "$work/$f.out" >>"$log"; done
      if [ $mrc -ne 0 ] || [ $yrc -ne 0 ] || [ $xrc -ne 0 ]; then
        fail sample "exit statuses master $mrc, clientGpuY $yrc, clientGpuX $xrc: $(tail -1 "$work/sample-master.out")"
      elif part sample-order 60 "$build/tests/support/tactus-check-log" --gpu-slack-ns 20000 --gpu-drift-ppm 50 "$sched" "$slog" "$frames"; then
        say "sample: ok: $frames frames of STM's two-process GPU sample; $(tail -1 "$work/sample-order.out")"
      cp "$sched" "$slog" "$out/" 2>/dev/null
      else
        fail sample "$(tail -1 "$work/sample-order.out")"
      fi
    fi
  elif ((gpu)); then
    fail sample "the CUDA sample or tactus-check-log is not in the build"
  else
    skip sample "$nogpu"
  fi
fi

# fence ---------------------------------------------------------------------------------------
if want fence; then
  if ((gpu)) && have bench/gpu/gpu-fence-latency; then
    if part fence 90 "$build/bench/gpu/gpu-fence-latency" "$(limit 200 2000)"; then
      while read -r l; do say "fence: $l"; done < <(grep -E 'A end -> B start|host fence|ratio|enqueue call' "$work/fence.out")
    else
      fail fence "$(tail -2 "$work/fence.out" | paste -sd ' ' -)"
    fi
    # Two processes' kernels on one GPU take turns by context switches unless MPS serves both:
    # the same measurement under MPS, where its control daemon is installed.
    if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
      export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps
      mkdir -p "$work/mps"
      if env -u LD_LIBRARY_PATH nvidia-cuda-mps-control -d >>"$log" 2>&1; then
        if part fence-mps 60 "$build/bench/gpu/gpu-fence-latency" "$(limit 200 2000)"; then
          while read -r l; do say "fence.mps: $l"; done < <(grep -E 'A end -> B start|ratio' "$work/fence-mps.out")
        else
          fail fence.mps "$(tail -2 "$work/fence-mps.out" | paste -sd ' ' -)"
        fi
        echo quit | env -u LD_LIBRARY_PATH nvidia-cuda-mps-control >>"$log" 2>&1
      else
        skip fence.mps "nvidia-cuda-mps-control -d failed (see the log)"
      fi
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    else
      skip fence.mps "nvidia-cuda-mps-control not installed"
    fi
  else
    skip fence "${nogpu}"
  fi
fi

# submit (the engine on the CUDA stand-in: runs on any machine) --------------------------------
if want submit; then
  if have bench/gpu/gpu-submit-bench; then
    if part submit 90 "$build/bench/gpu/gpu-submit-bench" "$build/compiler/tactus-compile" "$build/master/tactus-master" \
      bench/gpu/submit_bench.yaml "$(limit 300 3000)"; then
      while read -r l; do say "submit: $l"; done < <(grep -E 'p50|synchronis|blocked' "$work/submit.out")
    else
      fail submit "$(tail -1 "$work/submit.out")"
    fi
  else
    skip submit "gpu-submit-bench is not in the build (-Dbenchmarks=false)"
  fi
fi

# runtime -------------------------------------------------------------------------------------
if want runtime; then
  runtime_args=(--compile "$build/compiler/tactus-compile" --master "$build/master/tactus-master")
  quick_arg=()
  ((quick)) && quick_arg=(--quick)
  if ! have bench/runtime/stg-makespan; then
    skip runtime.stg-makespan "stg-makespan is not in the build (-Dbenchmarks=false)"
  elif [ -z "$data" ] || [ ! -d "$data/graphs" ]; then
    skip runtime.stg-makespan "no STG-50 data (--data, or ../shared/data/stg50; --prepare packs it)"
  else
    part stg-makespan "$(limit 120 150)" "$build/bench/runtime/stg-makespan" "${runtime_args[@]}" "$data" "${quick_arg[@]}"
    case $? in
      0) awk '/^unit /{u=$2} /^  hand-offs on one core/{h="hand-offs same core: "} /^  hand-offs across cores/{h="hand-offs across cores: "} /^  runs longer than/{h="runs beyond WCET: "}
        /^    (tactus|bare) +mean/ && h != "" {sub(/^ +/, ""); print "runtime.stg-makespan " u ": " h $0}
        /mean \(makespan - plan\)|the plan run bare|preempted/{sub(/^ +/, ""); print "runtime.stg-makespan " u ": " $0}' \
        "$work/stg-makespan.out" | while read -r l; do say "$l"; done ;;
      77) skip runtime.stg-makespan "$(tail -1 "$work/stg-makespan.out")" ;;
      *) fail runtime.stg-makespan "$(tail -1 "$work/stg-makespan.out")" ;;
    esac
  fi
  for b in handoff release; do
    prog=bench/runtime/runtime-$b-bench
    if ! have "$prog"; then skip "runtime.$b" "$prog is not in the build"; continue; fi
    # The hand-off benchmark's full run repeats its three loops 5 times; 3 keep the whole check
  # inside its 4 minutes (the figures are medians over the repetitions).
  extra=("${quick_arg[@]}")
  [ "$b" = handoff ] && ((!quick)) && extra=(--repeat 3)
  part "$b" "$(limit 90 100)" "$build/$prog" "${runtime_args[@]}" --client "$build/bench/runtime/tactus-bench-client" "${extra[@]}"
    case $? in
      0) grep -E 'repetitions, medians|back to back|^targets|release - bare|first start - bare' "$work/$b.out" |
        sed 's/^ *//' | while read -r l; do say "runtime.$b: $l"; done ;;
      77) skip "runtime.$b" "$(tail -1 "$work/$b.out")" ;;
      *) fail "runtime.$b" "$(tail -1 "$work/$b.out")" ;;
    esac
  done
fi

say "# device check: $( ((failed)) && echo FAILED || echo ok) (summary $summary, full output $log)"
exit "$failed"
