#!/usr/bin/env bash
# pijit's checks on a machine with an NVIDIA GPU (issue 19), one command:
#
#   bash tools/gpu_check.sh [PYTHON]     # a checkout built by tools/build.sh
#   bash tools/gpu_check.sh --pack        # a bare checkout with tools/gpu_pack.sh's pack unpacked
#                                         # in .gpu/ (the device machine: nothing of pijit's build)
#
# Run from the repository root. It prints what the machine has, what pijit's extension needs and
# cannot find there, the GPU backend's probe (python -m pijit sysinfo), then runs the GPU
# GoogleTest suites (the probe; the fused kernels, which run on the GPU and must give the CPU's
# bits; matmul; convolution; batch norm, pooling, softmax), the Python GPU suite, the GPU kernels' bench (bench_gpu_kernels) and PyTorch's
# figures beside it (pyscripts/bench/bench_gpu_peer.py).
# Exit status: 0 when every suite passed.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
status=0
bench=build/bench_gpu_kernels
if [ "${1:-}" = "--pack" ]; then
  # the pack's binaries where a build puts them, its Python and libraries first on the paths
  mkdir -p build/tests/cpp && cp .gpu/bin/_C*.so pyscripts/pijit/ && cp .gpu/bin/pijit_cpp_tests build/tests/cpp/
  bench=.gpu/bin/bench_gpu_kernels
  py=$PWD/.gpu/python/bin/$(ls .gpu/python/bin | head -n 1)
  export PYTHONHOME=$PWD/.gpu/python
  libs=$PWD/.gpu/lib:$PWD/.gpu/python/lib
  # the CUDA libraries pijit opens (cudart, NVRTC, cuBLASLt, cuDNN), wherever this machine keeps
  # them: the toolkit, or the nvidia-* Python packages of its frameworks
  for l in libcudart.so.13 libnvrtc.so.13 libcublasLt.so.13 libcudnn.so.9 libcuda.so.1; do
    ldconfig -p | grep -q "$l" && continue
    d=$(find /usr/local /opt /usr/lib -name "$l" -not -path '*/stubs/*' 2>/dev/null | head -n 1)
    [ -n "$d" ] && libs=$libs:$(dirname "$d")
  done
  export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  py=${1:-$(find_python 3.9)}
fi

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
PYTHONPATH=pyscripts "$py" -m pijit sysinfo | tee /tmp/pijit_sysinfo.$$ || status=1
if nvidia-smi -L > /dev/null 2>&1 && grep -q "no usable GPU" /tmp/pijit_sysinfo.$$; then
  echo "gpu_check: the driver sees a GPU but pijit cannot use it (above)"
  status=1
fi
rm -f /tmp/pijit_sysinfo.$$

echo "== GoogleTest (the backend's probe, the fused kernels on the GPU)"
if [ -x build/tests/cpp/pijit_cpp_tests ]; then
  ./build/tests/cpp/pijit_cpp_tests --gtest_filter='CudaBackend.*:FusedCuda.*:MatmulCuda.*:ConvCuda.*:NnCuda.*' || status=1
else
  echo "build/tests/cpp/pijit_cpp_tests: not built"
  status=1
fi

if command -v compute-sanitizer > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "== the GPU kernels' tests under compute-sanitizer (memcheck)"
  compute-sanitizer --tool memcheck --error-exitcode 1 ./build/tests/cpp/pijit_cpp_tests \
    --gtest_filter='FusedCuda.*OnTheGpu:MatmulCuda.*:ConvCuda.*:NnCuda.*' --gtest_brief=1 || status=1
fi

echo "== Python suites (GPU queries and the device target)"
PYTHONPATH=pyscripts "$py" tests/python/run.py -k test_gpu_backend || status=1

echo "== bench: the GPU kernels against the device's limits"
if [ -x "$bench" ]; then "$bench" || status=1; else echo "$bench: not built"; status=1; fi
echo "== the same figures for PyTorch (the machine's python3), when it is there"
(unset PYTHONHOME; python3 pyscripts/bench/bench_gpu_peer.py) || true
exit $status
