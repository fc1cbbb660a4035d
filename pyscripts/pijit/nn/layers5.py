"""nn.FractionalMaxPool2d / nn.FractionalMaxPool3d: MindSpore's cells over
ops.fractional_max_pool2d / fractional_max_pool3d (pijit/ops/ops_rest.py has the pooling:
windows of kernel_size at positions drawn from random samples in [0, 1), one sample per plane
and spatial dim, as torch's; _random_samples fixes them)."""
from pijit.nn.cell import Cell
from pijit.ops import ops_rest as _R

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPool(Cell):
    _fn = None
    _who = ""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError("For '%s', 'output_size' and 'output_ratio' can not be None at the same time"
                             % self._who)
        if output_size is not None and output_ratio is not None:
            raise ValueError("For '%s', only one of 'output_size' and 'output_ratio' can be given" % self._who)
        if not isinstance(return_indices, bool):
            raise TypeError("For '%s', the 'return_indices' must be a bool, but got %s"
                            % (self._who, type(return_indices).__name__))
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self._random_samples = _random_samples

    def construct(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, self._random_samples)

    def extend_repr(self):
        return "kernel_size=%s, output_size=%s, output_ratio=%s, return_indices=%s" % (
            self.kernel_size, self.output_size, self.output_ratio, self.return_indices)


class FractionalMaxPool2d(_FractionalMaxPool):
    """FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None)(input (N, C, H, W) or (C, H, W)) -> y, or (y, indices)."""
    _fn = staticmethod(_R.fractional_max_pool2d)
    _who = "FractionalMaxPool2d"


class FractionalMaxPool3d(_FractionalMaxPool):
    """FractionalMaxPool3d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None)(input (N, C, D, H, W) or (C, D, H, W)) -> y, or (y, indices)."""
    _fn = staticmethod(_R.fractional_max_pool3d)
    _who = "FractionalMaxPool3d"
