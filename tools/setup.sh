#!/usr/bin/env bash
# Sets up a fresh Debian machine for pijit (apt packages, build for pyenv 3.7 to 3.10 and the
# system python3, 3.11, whose build pyenv's 3.11 shares) and runs
# pijit's main job: an unchanged MindSpore-style example under `python -m pijit run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
for v in 3.7 3.8 3.9 3.10; do
  if [ ! -x "$(find_python "$v")" ]; then
    echo "pijit: error: pyenv Python $v not found (pijit builds for 3.7 to 3.10; install it with" \
         "'pyenv install $v')" >&2
    exit 1
  fi
done
bash tools/deps.sh
bash tools/build.sh
if [ ! -f pyscripts/pijit/_C.cpython-311-x86_64-linux-gnu.so ]; then
  echo "pijit: warning: no build for Python 3.11 (the system python3's headers, python3-dev, are missing)" >&2
fi
py=$(find_python 3.9)
example="${1:-pyscripts/examples/seeds/s000_cell01_ms_function_in_cells.py}"
echo "== python -m pijit run $example  (Python $("$py" -c 'import sys; print(sys.version.split()[0])'))"
PYTHONPATH=pyscripts "$py" -m pijit run "$example"
