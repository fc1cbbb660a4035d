"""Weight initialisers with MindSpore's names, parameters and formulas (mindspore.common.initializer,
2.5): fans, gains and bounds as MindSpore computes them, TruncatedNormal's a and b absolute bounds.

    initializer("he_uniform", (4, 3)), initializer(Normal(0.02), shape, pj.float32)

Values are generated in C++ in one vectorised pass at the result's dtype (the init_* ops of
graph/ops/init_ops.cc, ~1-3 ns an element; the numpy-style float64 draw, arithmetic and cast they
replace cost ~40-190). Seeding is MindSpore's: each draw takes its seed from numpy's global
generator (numpy.random.randint(1, 2**63, dtype=int64): real numpy, or pijit's stand-in, which
reproduces numpy's stream), so numpy.random.seed or mindspore.set_seed (which seeds numpy) makes
the weights reproducible, without either they differ from run to run, and building a network
advances numpy's stream by one draw per initialiser as MindSpore's does. The values for a seed
are pijit's generator's (MindSpore's C++ sampler is not reproduced), their distribution is
MindSpore's.

A subclass written for MindSpore, overriding _initialize(arr) to fill a float32 numpy array, is
run that way (numpy, or pijit's stand-in when numpy is absent).
"""
import math
import numbers
import operator

from pijit import dtype as _dt


def _calculate_fan_in_and_fan_out(shape):
    """(fan_in, fan_out) as MindSpore computes them: a 2-D (out, in) weight gives (in, out); more
    dims multiply both by the receptive field (the product of dims from the third on)."""
    dims = len(shape)
    if dims < 2:
        raise ValueError("'fan_in' and 'fan_out' cannot be computed for a tensor of fewer than 2 "
                         "dimensions, got %d dimension(s) (shape %s)" % (dims, tuple(shape)))
    receptive = 1
    for d in shape[2:]:
        receptive *= d
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(shape, mode):
    m = mode.lower() if isinstance(mode, str) else mode
    if m not in ("fan_in", "fan_out"):
        raise ValueError("'mode' %r is not supported, use one of ['fan_in', 'fan_out']" % (mode,))
    fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
    return fan_in if m == "fan_in" else fan_out


_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def _calculate_gain(nonlinearity, param=None):
    """The recommended gain of a nonlinearity: 1 for linear ones and sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope `param`, 0.01 when None)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError("negative_slope %r is not a valid number: with nonlinearity "
                             "'leaky_relu' it must be an int or a float, got %s"
                             % (param, type(param).__name__))
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError("nonlinearity must be one of %s, 'tanh', 'relu' or 'leaky_relu', got %r"
                     % (", ".join(repr(n) for n in _LINEAR), nonlinearity))


def _numpy_seed():
    """One seed from numpy's global generator, as MindSpore's initialisers take theirs."""
    np = _numpy()
    return int(np.random.randint(low=1, high=(1 << 63), dtype=np.int64))


def _op(name, shape, dtype, **attrs):
    """A fill by the C++ op `name` at `dtype` (floating dtypes without a kernel of their own get
    float32 values, cast), seeded from numpy's global generator."""
    from pijit import _C
    direct = dtype in (_dt.float32, _dt.float64)
    out = _C.op(name, (), dict(attrs, shape=tuple(shape), dtype=dtype if direct else _dt.float32,
                               seed=_numpy_seed()))
    return out if direct else out.astype(dtype)


def _uniform(shape, dtype, low, high):
    return _op("init_uniform", shape, dtype, low=float(low), high=float(high))


def _normal(shape, dtype, mean, sigma):
    if sigma < 0:
        raise ValueError("sigma < 0: the standard deviation must be >= 0, got %r" % (sigma,))
    return _op("init_normal", shape, dtype, mean=float(mean), sigma=float(sigma))


def _numpy():
    try:
        import numpy
        return numpy
    except ImportError:
        from pijit import numpy_lite
        return numpy_lite


_INITIALIZER_ALIAS = {}


def _register(*aliases):
    def register(cls):
        for name in (cls.__name__.lower(),) + aliases:
            _INITIALIZER_ALIAS.setdefault(name, cls)
        return cls
    return register


class Initializer(object):
    """Base: initializer(init, shape, dtype) binds shape and dtype, init_data() makes the tensor.
    Subclasses override _generate(shape, dtype) (pijit's) or _initialize(arr) (MindSpore's, on a
    float32 numpy array filled in place)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self.shape = None
        self.dtype = _dt.float32

    def _generate(self, shape, dtype):
        if type(self)._initialize is Initializer._initialize:
            raise NotImplementedError(type(self).__name__ + " must implement _initialize(arr)")
        np = _numpy()
        arr = np.zeros(shape, dtype=np.float32)
        self._initialize(arr)
        from pijit.tensor import Tensor
        return Tensor(arr, dtype)

    def _initialize(self, arr):
        """Fills the numpy array `arr` in place (MindSpore's interface)."""
        if type(self)._generate is Initializer._generate:
            raise NotImplementedError(type(self).__name__ + " must implement _initialize(arr)")
        data = self._generate(tuple(arr.shape), _dt.float32).asnumpy()
        arr[...] = data

    def __call__(self, arr):
        return self._initialize(arr)

    def init_data(self):
        if self.shape is None:
            raise ValueError("%s: no shape bound; use initializer(init, shape, dtype)"
                             % type(self).__name__)
        return self._generate(tuple(self.shape), self.dtype)

    def __repr__(self):
        args = ", ".join("%s=%r" % kv for kv in sorted(self._kwargs.items()))
        return "%s(%s)" % (type(self).__name__, args)


@_register("zeros")
class Zero(Initializer):
    def _generate(self, shape, dtype):
        import pijit as pj
        return pj.zeros(shape, dtype=dtype)


@_register("ones")
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


@_register()
class Normal(Initializer):
    """N(mean, sigma^2)."""

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    def _generate(self, shape, dtype):
        return _normal(shape, dtype, self.mean, self.sigma)


@_register()
class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _generate(self, shape, dtype):
        return _uniform(shape, dtype, -self.scale, self.scale)


@_register("truncated_normal")
class TruncatedNormal(Initializer):
    """N(mean, sigma^2) conditioned on [a, b]. a and b are absolute bounds, as in MindSpore's
    sampler (and torch's trunc_normal_): the defaults (-2, 2) leave N(0, 0.01^2) all but untouched;
    two sigmas either side of the mean is TruncatedNormal(s, m, m - 2 s, m + 2 s)."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _generate(self, shape, dtype):
        if self.sigma < 0:
            raise ValueError("sigma < 0: the standard deviation must be >= 0, got %r"
                             % (self.sigma,))
        return _op("init_truncated_normal", shape, dtype, mean=float(self.mean),
                   sigma=float(self.sigma), a=float(self.a), b=float(self.b))


@_register("xavier_uniform")
class XavierUniform(Initializer):
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _generate(self, shape, dtype):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _uniform(shape, dtype, -bound, bound)


@_register("xavier_normal")
class XavierNormal(Initializer):
    """N(0, sigma^2), sigma = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _generate(self, shape, dtype):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
        return _normal(shape, dtype, 0.0, self.gain * math.sqrt(2.0 / float(fan_in + fan_out)))


class _Kaiming(Initializer):
    """He (Kaiming) initialisers: std = gain(nonlinearity, negative_slope) / sqrt(fan), fan_in or
    fan_out by `mode` (either case); both are checked when the values are made."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape):
        fan = _calculate_correct_fan(shape, self.mode)
        return _calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


@_register("he_uniform")
class HeUniform(_Kaiming):
    """U(-bound, bound), bound = sqrt(3) * std."""

    def _generate(self, shape, dtype):
        bound = math.sqrt(3.0) * self._std(shape)
        return _uniform(shape, dtype, -bound, bound)


@_register("he_normal")
class HeNormal(_Kaiming):
    """N(0, std^2)."""

    def _generate(self, shape, dtype):
        return _normal(shape, dtype, 0.0, self._std(shape))


def _check_shape(shape):
    if isinstance(shape, list):
        shape = tuple(shape)
    elif isinstance(shape, numbers.Number):
        shape = (shape,)
    if not isinstance(shape, tuple):
        raise TypeError("initializer: shape must be a tuple, a list or an int, got %s"
                        % type(shape).__name__)
    dims = []
    for d in shape:
        try:
            d = operator.index(d) if not isinstance(d, bool) else 0
        except TypeError:
            d = 0
        if d <= 0:
            raise ValueError("initializer: every dimension of shape must be a positive int, got %r"
                             % (shape,))
        dims.append(d)
    return tuple(dims)


def initializer(init, shape=None, dtype=_dt.float32):
    """A tensor of `shape` filled by `init`: an Initializer, the name of one (see
    _INITIALIZER_ALIAS, any case), a number (Constant) or a Tensor (returned as a copy at `dtype`;
    its shape must be `shape` when one is given)."""
    from pijit import _C
    from pijit.tensor import Tensor
    if isinstance(init, _C.TensorBase):
        if shape is not None:
            want = (shape,) if isinstance(shape, int) else tuple(shape)
            if tuple(init.shape) != want:
                raise ValueError("initializer: the tensor has shape %s but shape %s was asked for"
                                 % (tuple(init.shape), want))
        return Tensor(init, dtype)
    if not isinstance(init, (numbers.Number, str, Initializer)):
        raise TypeError("initializer: init must be a Tensor, a number, a str or an Initializer, "
                        "got %s" % type(init).__name__)
    if shape is None:
        raise ValueError("initializer: shape is required unless init is a Tensor")
    shape = _check_shape(shape)
    if isinstance(init, str):
        cls = _INITIALIZER_ALIAS.get(init.lower())
        if cls is None:
            raise ValueError("initializer: unknown initializer %r; known: %s"
                             % (init, ", ".join(sorted(_INITIALIZER_ALIAS))))
        init = cls()
    elif isinstance(init, numbers.Number):
        init = Constant(init)
    init.shape, init.dtype = shape, _dt.as_dtype(dtype)
    return init.init_data()


__all__ = ["Initializer", "initializer", "TruncatedNormal", "Normal", "Uniform", "HeUniform",
           "HeNormal", "XavierUniform", "XavierNormal", "One", "Zero", "Constant"]


# ---- Identity, Sparse, Dirac, Orthogonal, VarianceScaling (MindSpore's formulas and checks) -----

def _eye(shape, dtype):
    import pijit as pj
    return pj.ops.eye(shape[0], shape[1], dtype)


@_register()
class Identity(Initializer):
    """The 2-D identity matrix (ones on the main diagonal of a rectangular one)."""

    def _generate(self, shape, dtype):
        if len(shape) != 2:
            raise ValueError("For Identity initializer, the dimension of the initialized tensor "
                             "should be 2, but got %d." % len(shape))
        return _eye(shape, dtype)


@_register()
class Sparse(Initializer):
    """A 2-D N(0, sigma^2) matrix with ceil(sparsity * rows) zeros in each column, at random
    rows."""

    def __init__(self, sparsity, sigma=0.01):
        super().__init__(sparsity=sparsity, sigma=sigma)
        self.sparsity, self.sigma = sparsity, sigma

    def _generate(self, shape, dtype):
        if len(shape) != 2:
            raise ValueError("For Sparse initializer, the dimension of the initialized tensor "
                             "should be 2, but got %d." % len(shape))
        from pijit import ops
        rows, cols = shape
        zeros = min(rows, int(math.ceil(self.sparsity * rows)))
        data = _normal(shape, _dt.float32, 0.0, self.sigma)
        if zeros > 0:
            # a random permutation of the rows of each column: its first `zeros` ranks are zeroed
            keys = _uniform(shape, _dt.float32, 0.0, 1.0)
            rank = ops.argsort(ops.argsort(keys, 0), 0)
            data = ops.where(ops.lt(rank, zeros), ops.zeros_like(data), data)
        return data if dtype is _dt.float32 else data.astype(dtype)


@_register()
class Dirac(Initializer):
    """The Dirac delta of a convolution weight (3, 4 or 5 dims): within each of `groups` groups,
    out channel d of the group gets a 1 at in channel d, the kernel centre; so the convolution
    passes its input through."""

    def __init__(self, groups=1):
        super().__init__(groups=groups)
        self.groups = groups

    def _generate(self, shape, dtype):
        dims = len(shape)
        if dims not in (3, 4, 5):
            raise ValueError("For Dirac initializer, only support to initialize tensor with "
                             "dimension of 3, 4 or 5, but got %d." % dims)
        if shape[0] % self.groups != 0:
            raise ValueError("For Dirac initializer, the first dimension of the initialized "
                             "tensor must be divisible by groups, but got first dimension %d, "
                             "groups %d." % (shape[0], self.groups))
        from pijit.tensor import Tensor
        per = shape[0] // self.groups
        centre = tuple(s // 2 for s in shape[2:])
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= s
        strides = strides[::-1]
        flat = [0.0] * acc
        for g in range(self.groups):
            for d in range(min(per, shape[1])):
                pos = (g * per + d, d) + centre
                flat[sum(p * st for p, st in zip(pos, strides))] = 1.0
        return Tensor(flat, dtype).reshape(tuple(shape))


@_register()
class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times gain: the rows (or the columns, whichever are fewer) of
    the Q of the QR of an N(0, 1) matrix (its sign fixed by R's diagonal); dims after the first
    are flattened."""

    def __init__(self, gain=1.):
        super().__init__(gain=gain)
        self.gain = gain

    def _generate(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError("For Orthogonal initializer, the dimension of the initialized tensor "
                             "should be no less than 2, but got %d." % len(shape))
        from pijit import ops
        rows = shape[0]
        cols = 1
        for d in shape[1:]:
            cols *= d
        data = _normal((rows, cols), _dt.float32, 0.0, 1.0)
        if rows < cols:
            data = data.T
        q, r = ops.qr(data)
        d = ops.diagonal(r)
        q = q * ops.sign(d)
        if rows < cols:
            q = q.T
        out = (q * float(self.gain)).reshape(tuple(shape))
        return out if dtype is _dt.float32 else out.astype(dtype)


@_register()
class VarianceScaling(Initializer):
    """Samples whose variance is scale / n, n the fan_in, the fan_out or their mean (mode):
    'truncated_normal' within two standard deviations (the std divided by 0.8796..., the std of
    a unit normal truncated there, so the result has the asked variance), 'untruncated_normal',
    or 'uniform' in [-sqrt(3 scale / n), sqrt(3 scale / n)]."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.:
            raise ValueError("For VarianceScaling initializer, the argument 'scale' must be "
                             "greater than 0, but got %s." % (scale,))
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("For VarianceScaling initializer, the argument 'mode' must be "
                             "fan_in, fan_out or fan_avg, but got %s." % (mode,))
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("For VarianceScaling initializer, the argument 'distribution' must "
                             "be uniform, truncated_normal or untruncated_normal, but got %s."
                             % (distribution,))
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _generate(self, shape, dtype):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            std = math.sqrt(scale) / 0.87962566103423978
            return _op("init_truncated_normal", shape, dtype, mean=0.0, sigma=std, a=-2.0 * std,
                       b=2.0 * std)
        if self.distribution == "untruncated_normal":
            return _normal(shape, dtype, 0.0, math.sqrt(scale))
        limit = math.sqrt(3.0 * scale)
        return _uniform(shape, dtype, -limit, limit)


__all__ += ["Identity", "Sparse", "Dirac", "Orthogonal", "VarianceScaling"]
