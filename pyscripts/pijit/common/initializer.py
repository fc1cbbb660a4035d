"""Weight initialisers with MindSpore's names, seeded through pijit.set_seed.

    initializer("he_uniform", (4, 3)), initializer(Normal(0.02), shape, pj.float32)
All draw from pijit's global Philox stream, so a given seed and construction order give the same
weights on every run and thread count.
"""
import math

from pijit import dtype as _dt


def _fans(shape):
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    receptive = 1
    for d in shape[2:]:
        receptive *= d
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity, param=None):
    if nonlinearity in ("linear", "conv2d", "sigmoid", "conv1d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError("unsupported nonlinearity %r" % (nonlinearity,))


class Initializer(object):
    """Base: init_data() returns the tensor once shape and dtype are bound by initializer()."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self.shape = None
        self.dtype = _dt.float32

    def _generate(self, shape, dtype):
        raise NotImplementedError(type(self).__name__ + " must implement _generate")

    def init_data(self):
        if self.shape is None:
            raise ValueError("%s: no shape bound; use initializer(init, shape, dtype)"
                             % type(self).__name__)
        return self._generate(tuple(self.shape), self.dtype)

    def __repr__(self):
        args = ", ".join("%s=%r" % kv for kv in sorted(self._kwargs.items()))
        return "%s(%s)" % (type(self).__name__, args)


def _uniform(shape, dtype, low, high):
    import pijit as pj
    return (pj.rand(*shape, dtype=_dt.float64) * (high - low) + low).astype(dtype)


def _normal(shape, dtype, mean, sigma):
    import pijit as pj
    return (pj.randn(*shape, dtype=_dt.float64) * sigma + mean).astype(dtype)


class Zero(Initializer):
    def _generate(self, shape, dtype):
        import pijit as pj
        return pj.zeros(shape, dtype=dtype)


class One(Initializer):
    def _generate(self, shape, dtype):
        import pijit as pj
        return pj.ones(shape, dtype=dtype)


class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _generate(self, shape, dtype):
        import pijit as pj
        return pj.full(shape, self.value, dtype=dtype)


class Normal(Initializer):
    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    def _generate(self, shape, dtype):
        return _normal(shape, dtype, self.mean, self.sigma)


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _generate(self, shape, dtype):
        return _uniform(shape, dtype, -self.scale, self.scale)


class TruncatedNormal(Initializer):
    """Normal(mean, sigma) restricted to [a, b] (default mean +- 2 sigma) by resampling."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _generate(self, shape, dtype):
        import pijit as pj
        from pijit import ops
        x = pj.randn(*shape, dtype=_dt.float64)
        lo, hi = self.a, self.b  # in units of sigma, as MindSpore's and PyTorch's defaults
        for _ in range(100):
            bad = (x < lo) | (x > hi)
            if not bool(bad.any()):
                break
            x = ops.where(bad, pj.randn(*shape, dtype=_dt.float64), x)
        return (ops.clamp(x, lo, hi) * self.sigma + self.mean).astype(dtype)


class XavierUniform(Initializer):
    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _generate(self, shape, dtype):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _uniform(shape, dtype, -bound, bound)


class XavierNormal(Initializer):
    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _generate(self, shape, dtype):
        fan_in, fan_out = _fans(shape)
        return _normal(shape, dtype, 0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)))


class _Kaiming(Initializer):
    """He/Kaiming initialisers: the scale is gain(nonlinearity) over sqrt(fan_in or fan_out)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError("%s: mode must be 'fan_in' or 'fan_out', got %r"
                             % (type(self).__name__, mode))
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_Kaiming):
    """Kaiming uniform: bound = gain * sqrt(3 / fan)."""

    def _generate(self, shape, dtype):
        bound = self._std(shape) * math.sqrt(3.0)
        return _uniform(shape, dtype, -bound, bound)


class HeNormal(_Kaiming):
    def _generate(self, shape, dtype):
        return _normal(shape, dtype, 0.0, self._std(shape))


_ALIASES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavier_uniform": XavierUniform, "xavieruniform": XavierUniform,
    "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
    "he_uniform": HeUniform, "heuniform": HeUniform, "he_normal": HeNormal, "henormal": HeNormal,
}


def initializer(init, shape=None, dtype=_dt.float32):
    """A tensor of `shape` filled by `init` (a name, an Initializer, a number or a Tensor)."""
    from pijit import _C
    from pijit.tensor import Tensor
    if shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(init, _C.TensorBase):
        if shape is not None and tuple(init.shape) != shape:
            raise ValueError("initializer: the tensor has shape %s but shape %s was asked for"
                             % (init.shape, shape))
        return Tensor(init, dtype)
    if isinstance(init, bool) or not isinstance(init, (int, float, str, Initializer)):
        raise TypeError("initializer: init must be a str, an Initializer, a number or a Tensor, "
                        "got %s" % type(init).__name__)
    if shape is None:
        raise ValueError("initializer: shape is required unless init is a Tensor")
    if isinstance(init, (int, float)):
        init = Constant(init)
    elif isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError("initializer: unknown initializer %r; known: %s"
                             % (init, ", ".join(sorted(_ALIASES))))
        init = cls()
    init.shape, init.dtype = shape, _dt.as_dtype(dtype)
    return init.init_data()
