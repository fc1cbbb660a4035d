"""Images in and out of the C++ kernels (kernels/image_ops.h), and the fusion plan.

An image arrives as a real numpy array (copied once into a pijit tensor through the buffer
protocol; the result goes back as a numpy view of the output tensor, no copy) or as a
pijit.numpy_lite array (already a pijit tensor: no copy either way; its uint8 is stored as int32,
which the kernels take as it is).

A Plan is one call of the `image_map` op: an optional crop/pad (with its border), flips, the value
chain Rescale -> Normalize(/Pad) and the HWC -> CHW layout. Each fusable transform adds itself to
a plan (drawing its random numbers then, in the order the steps would run); Compose hands a run of
consecutive fusable transforms one plan, so the CIFAR-10 augmentation is one pass over the pixels.
A transform that cannot join (a second crop, anything after HWC2CHW) ends the plan; the next one
starts a new plan on the result.
"""
from pijit import _C
from pijit import dtype as _pdt
from pijit.dataset._compat import np, LITE

_TB = _C.TensorBase
_op = _C.op
_tb_dtype = _TB.__dict__["dtype"].__get__  # the storage dtype (numpy_lite's ndarray.dtype is numpy's)
_tb_shape = _TB.__dict__["shape"].__get__
_SUPPORTED_STORAGE = ("UInt8", "Int8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64",
                      "Bool", "Float32", "Float64")

if LITE:
    from pijit.numpy_lite import _array as _la
    from pijit.numpy_lite import _dtypes as _ld
    _LITE_ARRAY = np.ndarray
    _REAL_NP = None
else:
    _REAL_NP = np
    _la = _ld = None
    _LITE_ARRAY = ()


def _lite_modules():
    global _la, _ld, _LITE_ARRAY
    if _la is None:
        from pijit.numpy_lite import _array, _dtypes
        _la, _ld, _LITE_ARRAY = _array, _dtypes, _array.ndarray
    return _la, _ld


_NP_NAMES = {}  # numpy dtype -> its name (numpy's dtype.name is slow: it is computed each time)


def _np_name(dt):
    name = _NP_NAMES.get(dt)
    if name is None:
        if dt.kind not in "biuf":
            return None
        name = _NP_NAMES[dt] = dt.name
    return name


class Image:
    """An input image: its pijit tensor (storage), where it came from, its numpy dtype name."""
    __slots__ = ("src", "t", "lite", "dtype")

    def __init__(self, src, op):
        self.src = src
        if _REAL_NP is not None and isinstance(src, _REAL_NP.ndarray):
            name = _np_name(src.dtype)
            if name is None:
                raise RuntimeError("%s: unsupported image dtype %s, expected an integer, bool or "
                                   "float array." % (op, src.dtype))
            self.t = _TB(src)
            self.lite = False
            self.dtype = name
            return
        if isinstance(src, _TB) and type(src).__name__ == "ndarray":
            la, _ = _lite_modules()
            if isinstance(src, la.ndarray):
                self.t = src
                self.lite = True
                self.dtype = la.ldtype(src).name
                return
        raise TypeError("Input should be NumPy or PIL image, got %s." % type(src))

    @property
    def shape(self):
        return tuple(_tb_shape(self.t))

    def out(self, t, dtype=None):
        """The kernel's result `t` as an array of the caller's kind; dtype: its numpy dtype name
        (default: the input's when t has the input's storage dtype, else t's own)."""
        if not self.lite:
            return _REAL_NP.asarray(t)
        la, ld = _lite_modules()
        if dtype is None:
            st = _tb_dtype(t)
            dtype = self.dtype if st == _tb_dtype(self.t) else ld.NATIVE[st].name
        return la.wrap(t, ld.dtype(dtype))


def storage_name(t):
    return str(_tb_dtype(t))


def cast(t, dt):
    return _op("cast", (t,), {"dtype": dt})


def reshape(t, shape):
    return _op("reshape", (t,), {"shape": tuple(shape)})


def rank_error(op, rank):
    return RuntimeError("%s: input tensor is not in shape of <H,W> or <H,W,C>, but got rank: %d%s"
                        % (op, rank, ". You may need to perform Decode first." if rank == 1
                           else ""))


_params_cache = {}


def _params(values):
    t = _params_cache.get(values)
    if t is None:
        if len(_params_cache) > 256:
            _params_cache.clear()
        from pijit.tensor import Tensor
        t = _params_cache[values] = Tensor(list(values), _pdt.float64)
    return t


class Plan:
    """One pending image_map call (see the module docstring). h, w, c, rank: the shape the steps
    so far produce; stage: 0 geometry may still change, 1 values started, 2 layout fixed."""

    # What a fresh plan holds; steps set instance attributes over these class defaults.
    top = left = 0
    cropped = hflip = vflip = False
    border = "constant"
    fill = ()
    to_float = False
    rescale = None           # (scale, shift)
    norm = None              # (means, stds)
    pad_channel = False
    out_dtype = "float32"
    chw = in_chw = False
    stage = 0
    reshape_to = None        # ToTensor on a 2-D image gives (1, H, W)

    def __init__(self, img, op):
        self.img = img if isinstance(img, Image) else Image(img, op)
        shape = _tb_shape(self.img.t)
        self.rank = rank = len(shape)
        self.h = shape[0] if rank >= 1 else 0
        self.w = shape[1] if rank >= 2 else 0
        self.c = shape[2] if rank == 3 else 1

    @property
    def dtype(self):
        """numpy dtype name of what the plan produces so far."""
        return self.out_dtype if self.to_float else self.img.dtype

    def require_image(self, op):
        if self.rank not in (2, 3):
            raise rank_error(op, self.rank)

    def identity(self):
        return (not self.cropped and not self.hflip and not self.vflip and not self.to_float
                and not self.chw and not self.in_chw)

    def run(self):
        img = self.img
        if self.identity():
            return img.src
        t = img.t
        st = storage_name(t)
        back16 = st == "Float16"
        if back16 or st not in _SUPPORTED_STORAGE:
            if st not in _SUPPORTED_STORAGE + ("Float16", "BFloat16"):
                raise RuntimeError("image transforms do not support dtype %s" % img.dtype)
            t = cast(t, _pdt.float32)
        attrs = {}
        if self.cropped or self.hflip or self.vflip:
            attrs.update(out_h=self.h, out_w=self.w, top=self.top, left=self.left,
                         hflip=self.hflip, vflip=self.vflip, border=self.border)
        values = ()
        if self.border == "constant" and self.fill and any(self.fill):
            values = tuple(float(v) for v in self.fill)
            attrs["nfill"] = len(values)
        if self.to_float:
            attrs["to_float"] = True
            if self.out_dtype != "float32":
                attrs["dtype"] = _pdt.float16
            if self.rescale is not None:
                attrs.update(rescale=True, scale=float(self.rescale[0]), shift=float(self.rescale[1]))
            if self.norm is not None:
                attrs.update(normalize=True, nmean=len(self.norm[0]))
                values += tuple(float(v) for v in self.norm[0]) + tuple(float(v) for v in self.norm[1])
            if self.pad_channel:
                attrs["pad_channel"] = True
        if self.chw:
            attrs["out_chw"] = True
        if self.in_chw:
            attrs["in_chw"] = True
        inputs = (t, _params(values)) if values else (t,)
        out = _op("image_map", inputs, attrs)
        if self.reshape_to is not None:
            out = reshape(out, self.reshape_to)
        if self.to_float:
            return img.out(out, self.out_dtype)
        if back16:
            out = cast(out, _pdt.float16)
        return img.out(out)


def run_alone(op, img):
    """`op` (a fusable transform) on one image."""
    plan = Plan(img, op.op_name)
    if not op.fuse(plan):  # a fresh plan takes every fusable transform
        raise AssertionError("%s refused a fresh plan" % op.op_name)
    return plan.run()


def run_chain(ops, args):
    """Applies `ops` in order to the column values `args` (a tuple), fusing runs of image
    transforms into single kernel calls. Returns the final tuple."""
    i, n = 0, len(ops)
    while i < n:
        op = ops[i]
        if getattr(op, "fusable", False) and len(args) == 1:
            plan = Plan(args[0], op.op_name)
            j = i
            while j < n and getattr(ops[j], "fusable", False) and ops[j].fuse(plan):
                j += 1
            if j > i:
                args = (plan.run(),)
                i = j
                continue
        out = op(*args)
        args = out if isinstance(out, tuple) else (out,)
        i += 1
    return args
