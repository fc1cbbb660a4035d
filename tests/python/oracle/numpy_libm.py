"""Imported before numpy by every oracle suite: numpy must compute transcendental functions with
the C library, as pijit does.

On a CPU with AVX-512, numpy 1.24 dispatches float64 pow/exp/log/sin/... to SVML kernels whose
results differ from glibc's by up to a few ulp (272 ** 0.1 gives ...6991 there, ...69912 with
glibc and on AVX2 CPUs). The oracle compares bit for bit, so it turns those kernels off; the CPU
features numpy may still use are unchanged on machines without AVX-512.
"""
import os
import sys

AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"


def _has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


if "numpy" not in sys.modules and "NPY_DISABLE_CPU_FEATURES" not in os.environ and _has_avx512():
    os.environ["NPY_DISABLE_CPU_FEATURES"] = AVX512
