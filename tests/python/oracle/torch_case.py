"""What the torch oracle suites that compare pijit with PyTorch at seeded random inputs share: T
(a pijit Tensor from an array, contiguous, optionally cast) and TorchCase (requires torch, one
torch thread, a RandomState seeded with the class's SEED, and close(): pijit's value against
torch's or numpy's within a tolerance)."""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import unittest

from requires import require_torch

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    np = torch = None

import pijit as pj


def T(a, dtype=None):
    return pj.Tensor(np.ascontiguousarray(a)) if dtype is None else pj.Tensor(np.ascontiguousarray(a).astype(dtype))


class TorchCase(unittest.TestCase):
    SEED = 0

    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)
        self.rs = np.random.RandomState(self.SEED)

    def close(self, got, want, rtol=1e-5, atol=1e-6, msg=""):
        got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
        want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=msg)
