"""mindspore.mint.linalg: the torch.linalg-style names MindSpore's mint has (inv, qr, norm), over
pijit's linear-algebra ops (pijit/ops/linalg.py)."""
from pijit import creation as _creation
from pijit.ops import linalg as _L
from pijit.ops.functional2 import norm  # noqa: F401  (torch.linalg.norm's signature already)

__all__ = ["inv", "qr", "norm"]


def inv(A):
    """The inverse of each square matrix in A [..., n, n]."""
    return _L.inverse(A)


def qr(A, mode="reduced"):
    """(Q, R) with A = Q @ R: mode 'reduced', 'complete' (Q square) or 'r' (Q empty, as torch)."""
    if mode == "r":
        _, r = _L.qr(A, "reduced")
        return _creation.zeros((0,), dtype=A.dtype), r
    if mode not in ("reduced", "complete"):
        raise ValueError("For 'linalg.qr', the 'mode' must be 'reduced', 'complete' or 'r', but got %r"
                         % (mode,))
    return _L.qr(A, mode)
