"""BatchNorm1d/2d, LayerNorm, GroupNorm (MindSpore signatures and momentum convention:
moving = momentum * moving + (1 - momentum) * batch, momentum=0.9 by default)."""
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit._validate import check_input
from pijit.common.initializer import initializer
from pijit.nn.cell import Cell
from pijit.parameter import Parameter


class _BatchNorm(Cell):
    def __init__(self, who, ndims, num_features, eps, momentum, affine, gamma_init, beta_init,
                 moving_mean_init, moving_var_init, use_batch_statistics):
        super().__init__()
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
            raise ValueError("%s: num_features must be a positive int, got %r" % (who, num_features))
        if not 0 <= momentum <= 1:
            raise ValueError("%s: momentum must be in [0, 1], got %r" % (who, momentum))
        self.who, self.ndims = who, ndims
        self.num_features, self.eps, self.momentum = num_features, float(eps), float(momentum)
        self.affine, self.use_batch_statistics = bool(affine), use_batch_statistics
        c = (num_features,)
        self.gamma = Parameter(initializer(gamma_init, c), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, c), name="beta", requires_grad=affine)
        self.moving_mean = Parameter(initializer(moving_mean_init, c), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, c), name="variance",
                                         requires_grad=False)

    def construct(self, x):
        check_input(self.who, "x", x, ndim=self.ndims, size=(1, self.num_features, "num_features"))
        training = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        out = _op("batch_norm", (x, self.gamma, self.beta, self.moving_mean, self.moving_variance),
                  training=bool(training), momentum=self.momentum, eps=self.eps)
        return out[0] if isinstance(out, tuple) else out

    def extend_repr(self):
        return "num_features=%d, eps=%s, momentum=%s, gamma=%r, beta=%r, moving_mean=%r, " \
               "moving_variance=%r" % (self.num_features, self.eps, self.momentum, self.gamma,
                                       self.beta, self.moving_mean, self.moving_variance)


class BatchNorm1d(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW"):
        super().__init__("BatchNorm1d", (2, 3), num_features, eps, momentum, affine, gamma_init,
                         beta_init, moving_mean_init, moving_var_init, use_batch_statistics)


class BatchNorm2d(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW"):
        if data_format != "NCHW":
            raise ValueError("BatchNorm2d: only data_format='NCHW' is supported")
        super().__init__("BatchNorm2d", (4,), num_features, eps, momentum, affine, gamma_init,
                         beta_init, moving_mean_init, moving_var_init, use_batch_statistics)


class SyncBatchNorm(_BatchNorm):
    """MindSpore's nn.SyncBatchNorm(num_features, eps, momentum, affine, gamma_init, beta_init,
    moving_mean_init, moving_var_init, use_batch_statistics, process_groups, dtype) over (N, C) or
    (N, C, H, W) inputs. The batch statistics are synchronised over the process groups; pijit runs
    one process (issue 48 brings data-parallel training), so they are this process's: BatchNorm
    exactly, with process_groups checked as MindSpore checks them (a list of lists of ranks)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, process_groups=None, dtype=None):
        if process_groups is not None:
            ok = isinstance(process_groups, list) and all(
                isinstance(g, list) and all(isinstance(r, int) and not isinstance(r, bool) and r >= 0
                                            for r in g) for g in process_groups)
            if not ok:
                raise TypeError("For 'SyncBatchNorm', the 'process_groups' must be a list of lists of "
                                "non-negative ints, but got %r." % (process_groups,))
        super().__init__("SyncBatchNorm", (2, 4), num_features, eps, momentum, affine, gamma_init,
                         beta_init, moving_mean_init, moving_var_init, use_batch_statistics)
        self.process_groups = process_groups


class LayerNorm(Cell):
    """LayerNorm(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init='ones',
    beta_init='zeros', epsilon=1e-7)."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
                 gamma_init="ones", beta_init="zeros", epsilon=1e-7, dtype=_dt.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError("LayerNorm: normalized_shape must be a tuple or list, got %s"
                            % type(normalized_shape).__name__)
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = float(epsilon)
        self.gamma = Parameter(initializer(gamma_init, self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, self.normalized_shape, dtype), name="beta")

    def construct(self, x):
        check_input("LayerNorm", "x", x, min_ndim=len(self.normalized_shape))
        axis = self.begin_norm_axis % x.ndim if x.ndim else 0
        if x._dims(axis) != self.normalized_shape:  # (the normalized sizes only)
            raise ValueError("LayerNorm: the input's shape %s from begin_norm_axis=%d must equal "
                             "normalized_shape %s" % (x.shape, self.begin_norm_axis,
                                                      self.normalized_shape))
        out = _op("layer_norm", (x, self.gamma, self.beta), begin_norm_axis=axis, eps=self.epsilon)
        return out[0] if isinstance(out, tuple) else out

    def extend_repr(self):
        return "normalized_shape=%s, begin_norm_axis=%d, begin_params_axis=%d" % (
            self.normalized_shape, self.begin_norm_axis, self.begin_params_axis)


class GroupNorm(Cell):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=_dt.float32):
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels (%d) must be divisible by num_groups (%d)"
                             % (num_channels, num_groups))
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, float(eps)
        self.affine = bool(affine)
        self.gamma = Parameter(initializer(gamma_init, (num_channels,), dtype), name="gamma",
                               requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, (num_channels,), dtype), name="beta",
                              requires_grad=affine)

    def construct(self, x):
        check_input("GroupNorm", "x", x, min_ndim=2, size=(1, self.num_channels, "num_channels"))
        out = _op("group_norm", (x, self.gamma, self.beta), num_groups=self.num_groups, eps=self.eps)
        return out[0] if isinstance(out, tuple) else out

    def extend_repr(self):
        return "num_groups=%d, num_channels=%d" % (self.num_groups, self.num_channels)
