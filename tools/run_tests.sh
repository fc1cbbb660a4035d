#!/usr/bin/env bash
# The whole test matrix: GoogleTest suites, the Python suites on pyenv 3.7, 3.8, 3.9, 3.10 and 3.11
# (plain and under PIJIT_STRESS) and 3.12 (plain: no capture yet), CPython's regression tests stock
# vs PIJIT_STRESS, and the numpy and torch oracle suites on the system python3 (numpy is installed
# by tools/deps.sh; the torch suites skip, and say so, where python3-torch is not installed). Ends
# with one line "N passed, N failed" and exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
bash tools/deps.sh
# Child processes import pijit hundreds of times (the CLI, bisect and regrtest suites): with
# PYTHONDONTWRITEBYTECODE in the environment each import compiled pijit's 140 modules again
# (0.4 s of a 0.5 s import). The suites do not depend on it; let Python cache the bytecode.
unset PYTHONDONTWRITEBYTECODE
bash tools/build.sh || { echo "0 passed, 1 failed"; echo "pijit: build failed"; exit 1; }
passed=0; failed=0
tally() {  # parses the "N passed, N failed" line a suite printed
  local line; line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then echo "pijit: $2 printed no summary (crashed?)"; failed=$((failed + 1)); return; fi
  passed=$((passed + $(echo "$line" | awk '{print $1}')))
  failed=$((failed + $(echo "$line" | awk '{print $3}')))
  echo "== $2: $line"
}
log=$(mktemp -d)
# GoogleTest once (the JSON report names the tests that skipped: only tools/gtest_summary.py's
# allowed skips pass); on a CPU with AVX-512 the fused loops are AVX-512 code: their tests run on
# the AVX2 code too.
run_gtest() {
  ./build/tests/cpp/pijit_cpp_tests --gtest_brief=1 --gtest_output="json:$log/gtest.json" > "$log/gtest.txt" 2>&1
  python3 tools/gtest_summary.py "$log/gtest.txt" "$log/gtest.json" >> "$log/gtest.txt"
  if grep -q " avx512f" /proc/cpuinfo 2>/dev/null; then
    PIJIT_FUSED_ISA=avx2 ./build/tests/cpp/pijit_cpp_tests --gtest_brief=1 --gtest_filter='Fused*:Passes.Fuse*' \
      --gtest_output="json:$log/gtest_avx2.json" > "$log/gtest_avx2.txt" 2>&1
    python3 tools/gtest_summary.py "$log/gtest_avx2.txt" "$log/gtest_avx2.json" >> "$log/gtest_avx2.txt"
  fi
  if grep -q " sha_ni" /proc/cpuinfo 2>/dev/null; then  # (SHA-256 without the SHA extensions too)
    PIJIT_SHA=portable ./build/tests/cpp/pijit_cpp_tests --gtest_brief=1 --gtest_filter='Sha256.*:CacheEntry.*' \
      --gtest_output="json:$log/gtest_sha.json" > "$log/gtest_sha.txt" 2>&1
    python3 tools/gtest_summary.py "$log/gtest_sha.txt" "$log/gtest_sha.json" >> "$log/gtest_sha.txt"
  fi
}
# One Python version: its suites plain (run_plain) and under PIJIT_STRESS (run_stress), and
# CPython's own regression tests (run_regrtest: stock vs every frame a capture candidate, test by
# test). Write $log/{py,stress,cpython}$1.txt.
run_plain() {
  local v=$1 py
  py=$(find_python "$v")
  if [ ! -x "$py" ]; then echo "pijit: python $v missing" > "$log/py$v.txt"; return; fi
  PYTHONPATH=pyscripts "$py" tests/python/run.py --durations 12 > "$log/py$v.txt" 2>&1
}
run_stress() {  # the same suites with every frame a capture candidate (capture must never change a result)
  local v=$1 py
  py=$(find_python "$v")
  if [ ! -x "$py" ]; then return; fi
  PIJIT_STRESS=2 PYTHONPATH=pyscripts "$py" -W ignore tests/python/run.py > "$log/stress$v.txt" 2>&1
}
run_regrtest() {
  local v=$1 py
  py=$(find_python "$v")
  if [ ! -x "$py" ]; then return; fi
  "$py" tests/cpython/run_regrtest.py -j 1 > "$log/cpython$v.txt" 2>&1
}
timed() {  # runs "$@" and notes its wall time: where the matrix's (and CI's) minutes go
  local t0=$SECONDS
  "$@"
  echo "$((SECONDS - t0)) s  $*" >> "$log/times.txt"
}
run_version() { timed run_plain "$1"; timed run_stress "$1"; timed run_regrtest "$1"; }
# The numpy and torch oracle suites on the system python3. PyTorch is optional
# (PIJIT_EXTRA_PKGS="python3-torch"): without the package its oracle suites skip, and say so; with
# it, a torch that does not import fails them.
run_oracle() {
  [ -x /usr/bin/python3 ] || return 0
  local no_torch=""
  if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
    no_torch=1
    echo "pijit: python3-torch is not installed: the torch oracle suites are skipped (PIJIT_ALLOW_NO_TORCH=1)" > "$log/oracle.txt"
  fi
  PIJIT_ALLOW_NO_TORCH=$no_torch PYTHONPATH=pyscripts /usr/bin/python3 tests/python/run.py --oracle >> "$log/oracle.txt" 2>&1
}
# Two lanes at once (one core each: the suites are single-threaded), balanced by measured time
# (two lanes on this machine's kind, per version 3.7-3.10: plain ~2.3 min, stress ~4.5, regression
# tests ~2; 3.11: plain ~2.7, stress ~4.5, regression tests ~2; 3.12's plain suites ~1; GoogleTest,
# the oracles and the report page ~1): lane A ~24.5 min, lane B ~22.5.
# 3.11's pijit._C is built with the system python3's headers, the same ABI as pyenv's. 3.12 runs
# its suites plain only: it does not capture yet, so stress and the regression tests compare
# CPython with itself.
# pijit.report's HTML page in headless Chromium (system python3, Debian's selenium)
run_browser() { PIJIT_REQUIRE_BROWSER=1 bash tests/browser/run.sh > "$log/browser.txt" 2>&1; }
(timed run_gtest; run_version 3.7; run_version 3.8; timed run_regrtest 3.11; timed run_plain 3.11
 timed run_plain 3.12; timed run_oracle; timed run_browser) &
lane_a=$!
(run_version 3.9; run_version 3.10; timed run_stress 3.11) &
lane_b=$!
wait "$lane_a" "$lane_b"
tail -n 30 "$log/gtest.txt"
tally "$log/gtest.txt" "GoogleTest"
if [ -f "$log/gtest_avx2.txt" ]; then tally "$log/gtest_avx2.txt" "GoogleTest fused kernels on AVX2 (PIJIT_FUSED_ISA=avx2)"; fi
if [ -f "$log/gtest_sha.txt" ]; then tally "$log/gtest_sha.txt" "GoogleTest SHA-256 without the SHA extensions (PIJIT_SHA=portable)"; fi
for v in 3.7 3.8 3.9 3.10 3.11; do
  tail -n 55 "$log/py$v.txt"
  tally "$log/py$v.txt" "Python $v"
  tail -n 5 "$log/stress$v.txt" 2>/dev/null
  tally "$log/stress$v.txt" "Python $v under PIJIT_STRESS"
  tail -n 8 "$log/cpython$v.txt" 2>/dev/null
  tally "$log/cpython$v.txt" "CPython $v regression tests under PIJIT_STRESS"
done
tail -n 20 "$log/py3.12.txt"
tally "$log/py3.12.txt" "Python 3.12 (no capture yet: functions run eagerly)"
if [ -f "$log/oracle.txt" ]; then
  tail -n 20 "$log/oracle.txt"
  tally "$log/oracle.txt" "oracle (system python3)"
fi
tail -n 4 "$log/browser.txt"
tally "$log/browser.txt" "report page in Chromium"
echo "== wall time per stage (two lanes run at once):"
sort -rn "$log/times.txt" | sed 's/^/   /'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
