#!/usr/bin/env bash
# Configures and builds pijit in ./build: the core library, the GoogleTest suites, and pijit._C for
# pyenv's 3.7 to 3.10, the system python3 (3.11, which pyenv's 3.11 shares) and pyenv's 3.12. The
# extensions are copied next to pyscripts/pijit so `PYTHONPATH=pyscripts python -m pijit` works.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
pythons=()
for v in 3.7 3.8 3.9 3.10; do
  p=$(find_python "$v")
  if [ -x "$p" ]; then pythons+=("$p"); else echo "pijit: warning: pyenv $v not found" >&2; fi
done
# The system python3 (Debian 12: 3.11) when its headers are installed (python3-dev): its pijit._C
# serves pyenv's 3.11 too (same ABI), and the oracle suites run on it with Debian's numpy.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" 2>/dev/null; then
  pythons+=(/usr/bin/python3)
fi
# 3.12: the opcode table's column and the decoder run there; functions run eagerly (no capture yet).
p=$(find_python 3.12)
if [ -x "$p" ]; then pythons+=("$p"); fi
list=$(IFS=';'; echo "${pythons[*]}")
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.ccache}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "-DPIJIT_PYTHONS=$list" ${PIJIT_CUDA:+"-DPIJIT_CUDA=$PIJIT_CUDA"} | { grep "pijit:" || true; }
cmake --build build -j "${PIJIT_JOBS:-2}"
