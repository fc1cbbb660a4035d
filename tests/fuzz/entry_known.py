"""Known failures of tests/fuzz/entry_fuzz.py, excluded from CI by exact case id, each with its reason
and the bug it stands for. Remove an entry when its bug is fixed (the CI test fails on a known case
that passes, so this list cannot go stale).

    KNOWN = {"s<seed>-<index>": "what fails, where (file:line), and the reproduction"}
"""

# (case ids are tied to the generator in entry_fuzz.py: a change to how cases are drawn renumbers
# them, and test_entry_fuzz's re-run of this list says which to update)
KNOWN = {
}
