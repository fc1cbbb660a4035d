#!/usr/bin/env bash
# pijit's checks on a machine with an NVIDIA GPU (issue 19), one command:
#
#   bash tools/gpu_check.sh [PYTHON]
#
# Run from the repository root of a checkout built by tools/build.sh (here, or carried to the GPU
# machine with build/ and pyscripts/pijit/_C*.so). It prints what the machine has, what pijit's
# extension needs and cannot find there (oneDNN, AsmJit: carry them and set LD_LIBRARY_PATH), the
# GPU backend's probe (python -m pijit sysinfo), then runs the GPU GoogleTest and Python suites.
# Exit status: 0 when every suite passed.
#
# What runs on the GPU today: the backend's probe and pijit.hal's device queries. There are no
# GPU kernels yet, so there are no GPU op tests or benchmarks to run; they join this script as
# they land.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
py=${1:-$(find_python 3.9)}
status=0

echo "== machine"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version \
  --format=csv,noheader || echo "nvidia-smi: not found"
command -v nvcc >/dev/null && nvcc --version | tail -n 1 || echo "nvcc: not found"
echo "python: $py ($("$py" --version 2>&1))"

echo "== what the extension needs"
for so in pyscripts/pijit/_C*.so; do
  missing=$(ldd "$so" 2>/dev/null | grep "not found" || true)
  echo "$so: ${missing:-every shared library found}"
  [ -n "$missing" ] && status=1
done

echo "== pijit sysinfo"
PYTHONPATH=pyscripts "$py" -m pijit sysinfo || status=1

echo "== GoogleTest (the backend's probe)"
if [ -x build/tests/cpp/pijit_cpp_tests ]; then
  ./build/tests/cpp/pijit_cpp_tests --gtest_filter='CudaBackend.*' --gtest_brief=1 || status=1
else
  echo "build/tests/cpp/pijit_cpp_tests: not built"
  status=1
fi

echo "== Python suites (GPU queries and the device target)"
PYTHONPATH=pyscripts "$py" tests/python/run.py -k test_gpu_backend || status=1
exit $status
