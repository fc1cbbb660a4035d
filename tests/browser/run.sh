#!/usr/bin/env bash
# pijit.report's page in headless Chromium, on the system python3 with Debian's python3-selenium,
# chromium and chromium-driver (apt-get install python3-selenium chromium chromium-driver).
# Without them the suite says why it skipped. Last line, as every suite: "N passed, N failed".
cd "$(dirname "$0")/../.."
if [ ! -x /usr/bin/python3 ]; then
  echo "skipped: the browser suite runs on /usr/bin/python3, which is missing"
  if [ "${PIJIT_REQUIRE_BROWSER:-}" = 1 ]; then echo "0 passed, 1 failed"; exit 1; fi
  echo "0 passed, 0 failed"
  exit 0
fi
PYTHONPATH=pyscripts exec /usr/bin/python3 tests/browser/test_report_browser.py "$@"
