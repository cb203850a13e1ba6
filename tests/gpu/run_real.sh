#!/bin/bash
# Runs the GPU tests with the real-kernel client; exit 77 (skipped) when no CUDA device is present.
client="$1"; tests="$2"
"$client" --probe
rc=$?
if [ $rc -eq 77 ]; then echo "no CUDA device: the real-GPU tests are skipped"; exit 77; fi
if [ $rc -ne 0 ]; then echo "probe failed with $rc"; exit 1; fi
exec "$tests"
