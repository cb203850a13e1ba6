#!/usr/bin/env bash
# Runs pytest from the given python3 on a test file; exit 77 (skipped) where pytest or pandas is
# missing (python3-pytest, python3-pandas). usage: run_pytest.sh PYTHON3 TEST_FILE
set -uo pipefail
python=$1 file=$2
for m in pytest pandas; do
  "$python" -c "import $m" 2>/dev/null || { echo "python package test: $python has no $m (python3-$m), skipped"; exit 77; }
done
cd "$(mktemp -d)" && exec "$python" -m pytest -v -p no:cacheprovider "$file"
