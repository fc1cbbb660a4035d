#!/usr/bin/env bash
# Installs pijit's build and test dependencies from Debian 12's repositories (idempotent: does
# nothing when they are already present), then checks that each one really is installed and
# names any that is not, so a failed install never surfaces later as a CMake trace.
#
# Every package is named, including those Debian only *recommends*: apt runs with
# --no-install-recommends, so a recommended package the build needs must be in this list.
#   cmake g++ make pkg-config    the toolchain (libabsl-dev recommends pkg-config)
#   ccache                       compiler cache (optional for CMake, used when present)
#   libdnnl-dev                  oneDNN 2.6, the CPU kernels
#   ocl-icd-opencl-dev           recommended by libdnnl-dev, *required* by its CMake config
#   opencl-c-headers             (Debian's oneDNN is built with the OpenCL GPU runtime, so
#                                dnnl-config.cmake calls find_package(OpenCL))
#   libasmjit-dev                AsmJit, machine code for fused loops
#   libabsl-dev                  abseil containers and strings
#   libgtest-dev googletest      GoogleTest suites
#   python3-dev                  headers of the system python3 (3.11): pijit._C for 3.11
#   python3-numpy                the numpy oracle (system python3 only)
#   chromium chromium-driver     the HTML run report's test in a real headless browser
#   python3-selenium             (tests/browser, on the system python3)
#   graphviz                     `dot`: dumps render each graph as SVG (PIJIT_DUMP_DIR, the report)
# PIJIT_EXTRA_PKGS adds more (for example "python3-torch libopenblas0" for the PyTorch oracle).
set -euo pipefail
pkgs=(cmake g++ make pkg-config ccache libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
      libasmjit-dev libabsl-dev libgtest-dev googletest python3-dev python3-numpy
      chromium chromium-driver python3-selenium graphviz)
# shellcheck disable=SC2206
pkgs+=(${PIJIT_EXTRA_PKGS:-})

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi

echo "pijit: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "pijit: error: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  SUDO=sudo
fi
log=$(mktemp)
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
       --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
fi
rm -f "$log"

still=()
for p in "${missing[@]}"; do installed "$p" || still+=("$p"); done
if [ ${#still[@]} -gt 0 ]; then
  echo "pijit: error: these Debian packages are needed and could not be installed: ${still[*]}" >&2
  echo "pijit: install them with: apt-get install --no-install-recommends ${still[*]}" >&2
  exit 1
fi
