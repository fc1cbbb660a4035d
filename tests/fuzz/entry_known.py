"""Known failures of tests/fuzz/entry_fuzz.py, excluded from CI by exact case id, each with its reason
and the bug it stands for. Remove an entry when its bug is fixed (the CI test fails on a known case
that passes, so this list cannot go stale).

    KNOWN = {"s<seed>-<index>": "what fails, where (file:line), and the reproduction"}
"""

KNOWN = {
}
