"""Known failures of tests/fuzz/entry_fuzz.py, excluded from CI by exact case id, each with its reason
and the bug it stands for. Remove an entry when its bug is fixed (the CI test fails on a known case
that passes, so this list cannot go stale).

    KNOWN = {"s<seed>-<index>": "what fails, where (file:line), and the reproduction"}
"""

# (case ids are tied to the generator in entry_fuzz.py: a change to how cases are drawn renumbers
# them, and test_entry_fuzz's re-run of this list says which to update)
KNOWN = {
    "s41-3": "tile wraps its output size around 64 bits and answers with the wrong shape: "
             "ops.tile(pj.ones((4,)), (2**62 + 1,)) returns shape (4,) (4 * (2**62 + 1) wraps to 4; "
             "a product that wraps negative raises 'negative dimensions are not allowed' instead of "
             "'too big'). Cause: kernels/shape_ops.cc:378 `out[j] = d * r` unchecked. "
             "Repro: PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed 41 --case 3",
    "s41-1178": "pad adds paddings without a check and answers with the wrong shape: "
                "ops.pad(pj.ones((2, 2)), (-2**63, -2**63)) returns shape (2, 2), and "
                "ops.pad(pj.ones((2, 2)), (2**63 - 1, 2**63 - 1)) returns shape (2, 0) (2 + lo + hi wraps); "
                "(2**63 - 1, 1) raises with 'plus negative padding 9223372036854775807'. Cause: "
                "graph/ops/resize_ops.cc:116 `in + lo + hi` unchecked (signed overflow). "
                "Repro: PYTHONPATH=pyscripts python tests/fuzz/entry_fuzz.py --seed 41 --case 1178",
}
