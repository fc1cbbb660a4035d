"""Turns GoogleTest's output into pijit's "N passed, N failed" summary line."""
import re
import sys

text = open(sys.argv[1]).read()
m = re.search(r"\[==========\] (\d+) tests? from .* ran", text)
total = int(m.group(1)) if m else 0
f = re.search(r"\[  FAILED  \] (\d+) tests?, listed below", text)
failed = int(f.group(1)) if f else (0 if m else 1)
print("%d passed, %d failed" % (total - failed if m else 0, failed))
