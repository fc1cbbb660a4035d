"""mindspore.dataset.vision's transforms on NumPy images (H, W[, C]), as C++ kernels.

Semantics are MindSpore's C++ (OpenCV-based) ones: Rescale and Normalize compute in float32 step
by step; Resize is cv::resize's arithmetic (see kernels/image_ops.h); RandomCrop pads, then, when
pad_if_needed, pads both sides of a short dimension by the shortfall, then crops at a uniform
offset; CenterCrop pads with zeros (ceil half on top/left) when the image is smaller; padding
is (left, top, right, bottom) with MindSpore's 1-, 2- and 4-value forms. Argument errors are
TypeError/ValueError at construction, image errors RuntimeError naming the transform, with
MindSpore's messages.

The crop/pad/flip/Rescale/Normalize/NormalizePad/HWC2CHW/ToTensor family fuses: Compose (and
mindspore.dataset's map, through Compose) runs a run of them as one kernel pass (vision/_image.py).
"""
import math
import numbers
import struct

from pijit.dataset._compat import np
from pijit.dataset.transforms import _core
from pijit.dataset.transforms._core import TensorOperation, RandomMixin, check_type, check_value
from pijit.dataset.transforms.transforms import TypeCast
from pijit.dataset.vision import _image
from pijit.dataset.vision._image import Plan, Image, rank_error, run_alone
from pijit.dataset.vision.utils import Inter, Border

__all__ = ["ImageTensorOperation", "Rescale", "Normalize", "NormalizePad", "HWC2CHW", "ToTensor",
           "ToType", "Resize", "RandomResizedCrop", "Crop", "CenterCrop", "RandomCrop", "Pad",
           "RandomHorizontalFlip", "RandomVerticalFlip", "HorizontalFlip", "VerticalFlip",
           "Decode", "RandomCropDecodeResize"]

MAX_SIZE = 16777216  # MindSpore's FLOAT_MAX_INTEGER bound on image sizes


def _f32(x):
    """x rounded to float32 (MindSpore keeps these parameters as C++ floats)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


def _check_size(size, name="size"):
    """int or (height, width), each in [1, 16777216] (MindSpore's check_crop_size/check_resize)."""
    check_type(size, (int, list, tuple), name)
    if isinstance(size, int):
        check_value(size, (1, MAX_SIZE), name)
        return (size, size)
    if len(size) != 2:
        raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")
    for i, v in enumerate(size):
        check_type(v, (int,), "%s[%d]" % (name, i))
        check_value(v, (1, MAX_SIZE), name)
    return tuple(size)


def _parse_padding(padding):
    """(left, top, right, bottom) from MindSpore's int / 2-sequence / 4-sequence forms."""
    check_type(padding, (int, list, tuple), "padding")
    if isinstance(padding, int):
        padding = [padding] * 4
    if len(padding) not in (2, 4):
        raise ValueError("The size of the padding list or tuple should be 2 or 4.")
    for i, v in enumerate(padding):
        check_type(v, (int,), "padding[%d]" % i)
        check_value(v, (0, _core.INT32_MAX), "padding")
    if len(padding) == 2:
        padding = (padding[0], padding[0], padding[1], padding[1])
    return tuple(padding)


def _parse_fill(fill_value):
    check_type(fill_value, (int, tuple), "fill_value")
    if isinstance(fill_value, int):
        check_value(fill_value, (0, 255), "fill_value")
        return (fill_value,) * 3
    if len(fill_value) != 3:
        raise TypeError("fill_value should be a single integer or a 3-tuple.")
    for v in fill_value:
        check_type(v, (int,), "fill_value")
        check_value(v, (0, 255), "fill_value")
    return tuple(fill_value)


def _check_border(mode):
    check_type(mode, (Border,), "padding_mode")
    return mode.value


def _check_prob(prob):
    check_type(prob, (float, int), "prob")
    check_value(prob, (0.0, 1.0), "prob")
    return prob


class ImageTensorOperation(TensorOperation):
    """Base of the image transforms. Fusable ones implement fuse(plan) (vision/_image.py):
    add themselves to the plan and return True, or return False (before drawing anything) when
    the plan cannot take them."""
    fusable = False

    @property
    def op_name(self):
        return type(self).__name__

    def fuse(self, plan):
        return False

    def __call__(self, *imgs):
        if len(imgs) != 1:
            return tuple(self(i) for i in imgs)
        return run_alone(self, imgs[0])


def _fresh_geometry(plan):
    return plan.stage == 0 and not plan.cropped and not plan.hflip and not plan.vflip


# ---- values and layout -------------------------------------------------------------------------

class Rescale(ImageTensorOperation):
    """image * rescale + shift, as float32."""
    fusable = True

    def __init__(self, rescale, shift):
        check_type(rescale, (numbers.Number,), "rescale")
        check_type(shift, (numbers.Number,), "shift")
        self.rescale = rescale
        self.shift = shift

    def fuse(self, plan):
        if plan.rank not in (2, 3) or plan.stage > 1 or plan.rescale is not None \
                or plan.norm is not None or plan.chw:
            return False
        plan.to_float = True
        plan.rescale = (self.rescale, self.shift)
        plan.stage = 1
        return True

    def __call__(self, *imgs):
        if len(imgs) == 1:
            img = Image(imgs[0], "Rescale")
            if len(img.shape) not in (2, 3):  # any rank: elementwise, in float32 as MindSpore
                a = np.asarray(imgs[0]).astype(np.float32)
                return (a * np.float32(_f32(self.rescale)) + np.float32(_f32(self.shift))).astype(np.float32)
        return super().__call__(*imgs)


def _check_mean_std(mean, std):
    check_type(mean, (list, tuple), "mean")
    check_type(std, (list, tuple), "std")
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    if not mean:
        raise ValueError("Length of mean and std must both be 1 or equal to the number of channels.")
    for i, m in enumerate(mean):
        check_type(m, (numbers.Number,), "mean[%d]" % i)
        check_value(m, (0, 255), "mean_value")
    for i, s in enumerate(std):
        check_type(s, (numbers.Number,), "std[%d]" % i)
        if not 0 < s <= 255:
            raise ValueError("Input std_value is not within the required interval of (0, 255].")
    return tuple(mean), tuple(std)


class Normalize(ImageTensorOperation):
    """(image - mean) / std per channel, as float32; is_hwc=False for (C, H, W) images. One
    mean/std value applies to every channel."""
    fusable = True

    def __init__(self, mean, std, is_hwc=True):
        self.mean, self.std = _check_mean_std(mean, std)
        check_type(is_hwc, (bool,), "is_hwc")
        self.is_hwc = is_hwc
        self._pad = False
        self._dtype = "float32"

    def _channels(self, plan):
        if plan.rank == 2:
            return 1
        return plan.img.shape[0] if not self.is_hwc else plan.c

    def fuse(self, plan):
        if plan.norm is not None or plan.pad_channel or plan.stage > 1 or plan.chw:
            return False
        if not self.is_hwc and not (plan.identity() and plan.stage == 0):
            return False
        plan.require_image(self.op_name)
        c = self._channels(plan)
        if len(self.mean) != 1 and len(self.mean) != c:
            raise RuntimeError("%s: number of channels does not match the size of mean and std "
                               "vectors, got channels: %d, size of mean: %d"
                               % (self.op_name, c, len(self.mean)))
        if not self.is_hwc:
            plan.in_chw = True
            if plan.rank == 3:
                plan.c, plan.h, plan.w = plan.img.shape
        plan.to_float = True
        plan.norm = (self.mean, self.std)
        plan.pad_channel = self._pad
        plan.out_dtype = self._dtype
        plan.stage = 1
        return True


class NormalizePad(Normalize):
    """Normalize, then one more channel of zeros (HWC: last; CHW: first axis grows), as float32
    or float16."""

    def __init__(self, mean, std, dtype="float32", is_hwc=True):
        super().__init__(mean, std, is_hwc)
        check_type(dtype, (str,), "dtype")
        if dtype not in ("float32", "float16"):
            raise ValueError("dtype only supports float32 or float16.")
        self.dtype = dtype
        self._pad = True
        self._dtype = dtype


class HWC2CHW(ImageTensorOperation):
    """(H, W, C) -> (C, H, W); a 2-D image is returned as it is."""
    fusable = True

    def fuse(self, plan):
        if plan.chw or plan.in_chw:
            return False
        if plan.rank not in (2, 3):
            raise RuntimeError("HWC2CHW: image shape should be <H,W> or <H,W,C>, but got rank: %d"
                               % plan.rank)
        if plan.rank == 3:
            plan.chw = True
            plan.stage = 2
        return True


class ToTensor(ImageTensorOperation):
    """(H, W[, C]) -> (C, H, W) of image / 255 (times float32(1/255), as MindSpore), as
    output_type (default float32)."""

    def __init__(self, output_type=np.float32):
        from pijit import dtype as _pdt
        if not isinstance(output_type, _pdt.Type):
            try:
                np.dtype(output_type)
            except (TypeError, NotImplementedError, AttributeError):
                raise TypeError("Argument output_type with value %s is not of type [<class "
                                "'mindspore._c_expression.typing.Type'>, <class 'numpy.dtype'>], "
                                "but got %s." % (output_type, type(output_type))) from None
        self.output_type = output_type
        self._np_type = _core.np_dtype(output_type, "ToTensor")
        self.fusable = self._np_type.name in ("float32", "float16")

    def fuse(self, plan):
        return self._fuse_as(plan, self._np_type.name)

    def _fuse_as(self, plan, dtype):
        if plan.to_float or plan.chw or plan.in_chw or plan.stage > 1:
            return False
        if plan.rank not in (2, 3):
            raise RuntimeError("ToTensor: image shape should be <H,W,C>, but got rank: %d"
                               % plan.rank)
        if plan.dtype in ("uint32", "int64", "uint64"):
            raise RuntimeError("ToTensor: Input includes unsupported data type in [uint32, int64, "
                               "uint64, string, bytes].")
        plan.to_float = True
        plan.rescale = (_f32(_f32(1.0) / 255.0), 0.0)
        plan.out_dtype = dtype
        if plan.rank == 2:
            plan.reshape_to = (1, plan.h, plan.w)
        plan.chw = True
        plan.stage = 2
        return True

    def __call__(self, *imgs):
        if self.fusable or len(imgs) != 1:
            return super().__call__(*imgs)
        plan = Plan(imgs[0], "ToTensor")
        self._fuse_as(plan, "float32")
        return plan.run().astype(self._np_type)


class ToType(TypeCast):
    """The image cast to data_type (MindSpore's vision.ToType: TypeCast for images)."""


# ---- geometry ----------------------------------------------------------------------------------

def _crop_into(plan, top, left, h, w, border="constant", fill=()):
    plan.top, plan.left = top, left
    plan.h, plan.w = h, w
    plan.border = border
    plan.fill = fill
    plan.cropped = True


class Crop(ImageTensorOperation):
    """The (height, width) region whose top-left corner is coordinates = (top, left)."""
    fusable = True

    def __init__(self, coordinates, size):
        check_type(coordinates, (list, tuple), "coordinates")
        if len(coordinates) != 2:
            raise TypeError("Coordinates should be a list/tuple (y, x) of length 2.")
        for i, v in enumerate(coordinates):
            check_type(v, (int,), "coordinates[%d]" % i)
            check_value(v, (0, _core.INT32_MAX), "coordinates")
        self.coordinates = tuple(coordinates)
        self.size = size
        self._hw = _check_size(size)

    def fuse(self, plan):
        if not _fresh_geometry(plan):
            return False
        plan.require_image("Crop")
        (y, x), (h, w) = self.coordinates, self._hw
        if y + h > plan.h:
            raise RuntimeError("Crop: Crop height dimension: %d exceeds image height: %d"
                               % (y + h, plan.h))
        if x + w > plan.w:
            raise RuntimeError("Crop: Crop width dimension: %d exceeds image width: %d"
                               % (x + w, plan.w))
        _crop_into(plan, y, x, h, w)
        return True


class CenterCrop(ImageTensorOperation):
    """The central (height, width) region; a smaller image is first padded with zeros, the odd
    pixel on the top/left."""
    fusable = True

    def __init__(self, size):
        self.size = size
        self._hw = _check_size(size)

    def fuse(self, plan):
        if not _fresh_geometry(plan):
            return False
        plan.require_image("CenterCrop")
        ch, cw = self._hw
        top = (plan.h - ch) // 2 if plan.h >= ch else -((ch - plan.h + 1) // 2)
        left = (plan.w - cw) // 2 if plan.w >= cw else -((cw - plan.w + 1) // 2)
        _crop_into(plan, top, left, ch, cw, "constant", (0, 0, 0))
        return True


class Pad(ImageTensorOperation):
    """Pads the borders: padding int (all sides), (left/top, right/bottom) or
    (left, top, right, bottom); padding_mode a Border."""
    fusable = True

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = _parse_padding(padding)
        self.fill_value = _parse_fill(fill_value)
        self.padding_mode = padding_mode
        self._border = _check_border(padding_mode)

    def fuse(self, plan):
        if not _fresh_geometry(plan):
            return False
        plan.require_image("Pad")
        pl, pt, pr, pb = self.padding
        _crop_into(plan, -pt, -pl, plan.h + pt + pb, plan.w + pl + pr, self._border,
                   self.fill_value)
        return True


class RandomCrop(RandomMixin, ImageTensorOperation):
    """A (height, width) crop at a uniformly drawn position of the image padded by `padding`
    (and, with pad_if_needed, by the shortfall on both sides of a dimension smaller than the
    crop)."""
    fusable = True

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0,
                 padding_mode=Border.CONSTANT):
        self.size = size
        self._hw = _check_size(size)
        self.padding = padding
        self._pad = _parse_padding(padding) if padding is not None else (0, 0, 0, 0)
        check_type(pad_if_needed, (bool,), "pad_if_needed")
        self.pad_if_needed = pad_if_needed
        self.fill_value = fill_value
        self._fill = _parse_fill(fill_value)
        self.padding_mode = padding_mode
        self._border = _check_border(padding_mode)

    def fuse(self, plan):
        if not _fresh_geometry(plan):
            return False
        plan.require_image("RandomCrop")
        pl, pt, pr, pb = self._pad
        h, w = plan.h, plan.w
        if not (pt < 3 * h and pb < 3 * h and pl < 3 * w and pr < 3 * w):
            raise RuntimeError("Pad: padding size is three times bigger than the image size, "
                               "padding top: %d, padding bottom: %d, padding pad_left_: %d, "
                               "padding padding right:%d, image shape: %d, %d"
                               % (pt, pb, pl, pr, h, w))
        ch, cw = self._hw
        top, left = -pt, -pl
        ph, pw = h + pt + pb, w + pl + pr
        if not (ph == ch and pw == cw) and self.pad_if_needed and (ph < ch or pw < cw):
            if self._border != "constant" and any(self._pad):
                # The second pad mirrors the padded image, not the source: materialise the first.
                padded = Plan(plan.img, "RandomCrop")
                _crop_into(padded, top, left, ph, pw, self._border, self._fill)
                plan.__init__(Image(padded.run(), "RandomCrop"), "RandomCrop")
                top = left = 0
            if ph < ch:
                top -= ch - ph
                ph += 2 * (ch - ph)
            if pw < cw:
                left -= cw - pw
                pw += 2 * (cw - pw)
        if ph == ch and pw == cw:
            _crop_into(plan, top, left, ch, cw, self._border, self._fill)
            return True
        if ph < ch or pw < cw:
            raise RuntimeError("RandomCrop: invalid crop size, crop size is bigger than the image "
                               "dimensions, got crop height: %d, crop width: %d" % (ch, cw))
        rng = self._random()
        x = rng.randint(0, pw - cw)
        y = rng.randint(0, ph - ch)
        _crop_into(plan, top + y, left + x, ch, cw, self._border, self._fill)
        return True


class _Flip(ImageTensorOperation):
    fusable = True
    _axis = "h"

    def _flip(self, plan):
        if plan.stage > 1 or plan.chw:
            return False
        if plan.rank not in (2, 3):
            raise RuntimeError("%s: shape of input is not <H,W,C> or <H,W>, but got rank:%d"
                               % (self.op_name, plan.rank))
        return True

    def _toggle(self, plan):
        if self._axis == "h":
            plan.hflip = not plan.hflip
        else:
            plan.vflip = not plan.vflip


class HorizontalFlip(_Flip):
    """Mirrors the image left to right."""

    def fuse(self, plan):
        if not self._flip(plan):
            return False
        self._toggle(plan)
        return True


class VerticalFlip(HorizontalFlip):
    """Mirrors the image top to bottom."""
    _axis = "v"


class RandomHorizontalFlip(RandomMixin, _Flip):
    """Mirrors the image left to right with probability prob."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)

    def fuse(self, plan):
        if not self._flip(plan):
            return False
        if self._random().random() < self.prob:
            self._toggle(plan)
        return True


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirrors the image top to bottom with probability prob."""
    _axis = "v"


# ---- resampling --------------------------------------------------------------------------------

_INTERP = {Inter.NEAREST: "nearest", Inter.LINEAR: "linear", Inter.CUBIC: "cubic",
           Inter.AREA: "area"}


def _check_interp(interpolation):
    check_type(interpolation, (Inter,), "interpolation")
    return interpolation


def _resize(op, img, oh, ow, interpolation):
    """cv::resize of an Image to (oh, ow)."""
    if interpolation == Inter.ANTIALIAS:
        raise TypeError("The current InterpolationMode is not supported with NumPy input.")
    if interpolation == Inter.PILCUBIC:
        raise NotImplementedError("%s: Inter.PILCUBIC (Pillow's bicubic) is not implemented in "
                                  "pijit; use Inter.BICUBIC (OpenCV's)" % op)
    t = img.t
    storage = _image.storage_name(t)
    from pijit import dtype as _pdt
    back = None
    if img.lite and img.dtype == "uint8":  # stored as int32 by numpy_lite
        t, back = _image.cast(t, _pdt.uint8), _pdt.int32
    elif storage not in ("UInt8", "Float32", "Float64"):
        raise RuntimeError("%s: unsupported image dtype %s, expected uint8, float32 or float64"
                           % (op, img.dtype))
    out = _image._op("image_resize", (t,), {"out_h": oh, "out_w": ow,
                                            "mode": _INTERP[interpolation], "op": op})
    if back is not None:
        out = _image.cast(out, back)
    return img.out(out)


class Resize(ImageTensorOperation):
    """Resizes to size = (height, width), or, for an int, the shorter side to size keeping the
    aspect ratio (the longer side: round(longer / shorter * size) in float32, as MindSpore)."""

    def __init__(self, size, interpolation=Inter.LINEAR):
        check_type(size, (int, list, tuple), "size")
        if isinstance(size, int):
            check_value(size, (1, MAX_SIZE), "size")
        else:
            if len(size) != 2:
                raise TypeError("Size should be a single integer or a list/tuple (h, w) of "
                                "length 2.")
            for i, v in enumerate(size):
                check_type(v, (int,), "size[%d]" % i)
                check_value(v, (1, MAX_SIZE), "size")
        self.size = size
        self.interpolation = _check_interp(interpolation)

    def out_size(self, h, w):
        if not isinstance(self.size, int):
            return tuple(self.size)
        s = self.size
        if h < w:
            if h == 0:
                raise RuntimeError("Resize: the input height cannot be 0.")
            return s, int(math.floor(_f32(_f32(_f32(w) / h) * s) + 0.5))
        if w == 0:
            raise RuntimeError("Resize: the input width cannot be 0.")
        return int(math.floor(_f32(_f32(_f32(h) / w) * s) + 0.5)), s

    def __call__(self, *imgs):
        if len(imgs) != 1:
            return tuple(self(i) for i in imgs)
        img = Image(imgs[0], "Resize")
        shape = img.shape
        if len(shape) not in (2, 3):
            raise rank_error("Resize", len(shape))
        oh, ow = self.out_size(shape[0], shape[1])
        return _resize("Resize", img, oh, ow, self.interpolation)


class RandomResizedCrop(RandomMixin, ImageTensorOperation):
    """A crop of random area (fraction `scale` of the image) and aspect ratio (`ratio`, drawn
    log-uniformly), resized to size; after max_attempts draws that do not fit, the central crop
    with the aspect ratio clamped to `ratio`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        self.size = size
        self._hw = _check_size(size)
        for name, r in (("scale", scale), ("ratio", ratio)):
            check_type(r, (list, tuple), name)
            if len(r) != 2:
                raise TypeError("%s should be a list/tuple of length 2." % name)
            for v in r:
                check_type(v, (numbers.Number,), name)
            if r[0] > r[1]:
                raise ValueError("%s should be in (min,max) format. Got (max,min)." % name)
        if scale[0] < 0:
            raise ValueError("Input scale[0] is not within the required interval of [0, 16777216].")
        if ratio[0] <= 0:
            raise ValueError("Input ratio[0] is not within the required interval of (0, 16777216].")
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.interpolation = _check_interp(interpolation)
        _core.check_type(max_attempts, (int,), "max_attempts")
        check_value(max_attempts, (1, _core.INT32_MAX), "max_attempts")
        self.max_attempts = max_attempts

    def crop_box(self, h, w):
        rng = self._random()
        lo, hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(self.max_attempts):
            s = rng.uniform(self.scale[0], self.scale[1])
            aspect = math.exp(rng.uniform(lo, hi))
            cw = max(1, int(round(math.sqrt(h * w * s * aspect))))
            ch = max(1, int(round(cw / aspect)))
            if cw <= w and ch <= h:
                x = rng.randint(0, w - cw)
                y = rng.randint(0, h - ch)
                return y, x, ch, cw
        img_aspect = w / h
        if img_aspect < self.ratio[0]:
            cw, ch = w, int(round(w / self.ratio[0]))
        elif img_aspect > self.ratio[1]:
            ch, cw = h, int(round(h * self.ratio[1]))
        else:
            cw, ch = w, h
        cw, ch = max(1, min(cw, w)), max(1, min(ch, h))
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def __call__(self, *imgs):
        if len(imgs) != 1:
            return tuple(self(i) for i in imgs)
        img = Image(imgs[0], "RandomResizedCrop")
        shape = img.shape
        if len(shape) not in (2, 3):
            raise rank_error("RandomResizedCrop", len(shape))
        y, x, ch, cw = self.crop_box(shape[0], shape[1])
        plan = Plan(img, "RandomResizedCrop")
        _crop_into(plan, y, x, ch, cw)
        cropped = Image(plan.run(), "RandomResizedCrop")
        return _resize("RandomResizedCrop", cropped, self._hw[0], self._hw[1], self.interpolation)


class Decode(ImageTensorOperation):
    """Decodes an encoded image (1-D uint8 array of JPEG/PNG/BMP bytes) to RGB (H, W, 3) uint8,
    through Pillow when it is installed; pijit has no image codec of its own."""

    def __init__(self, to_pil=False):
        check_type(to_pil, (bool,), "to_pil")
        self.to_pil = to_pil

    def __call__(self, *imgs):
        if len(imgs) != 1:
            return tuple(self(i) for i in imgs)
        data = imgs[0]
        if not isinstance(data, np.ndarray):
            raise TypeError("Input should be an encoded image in 1-D NumPy format, got %s."
                            % type(data))
        if data.ndim != 1 or str(data.dtype) != "uint8":
            raise RuntimeError("Decode: Invalid input shape, only support 1D uint8 input, got "
                               "rank: %d, dtype: %s." % (data.ndim, data.dtype))
        try:
            from PIL import Image as PILImage
        except ImportError:
            raise NotImplementedError(
                "Decode: decoding JPEG/PNG/BMP needs an image codec (libjpeg/libpng through "
                "OpenCV or Pillow); pijit has none and Pillow is not installed. Store decoded "
                "uint8 (H, W, C) arrays instead.") from None
        import io
        try:
            im = PILImage.open(io.BytesIO(bytes(bytearray(data.tolist()) if not hasattr(data, "tobytes")
                                                else data.tobytes())))
            im = im.convert("RGB")
        except Exception as e:  # noqa: BLE001 - Pillow raises many kinds
            raise RuntimeError("Decode: image decode failed. %s" % e) from None
        if self.to_pil:
            return im
        w, h = im.size
        raw = im.tobytes()
        from pijit.dataset._compat import frombuffer
        return frombuffer(bytearray(raw), np.uint8, (h, w, 3))


class RandomCropDecodeResize(RandomResizedCrop):
    """Decode, then RandomResizedCrop (MindSpore's fused ImageNet first step; same arguments)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        super().__init__(size, scale, ratio, interpolation, max_attempts)
        self._decode = Decode()

    def __call__(self, *imgs):
        if len(imgs) != 1:
            return tuple(self(i) for i in imgs)
        return super().__call__(self._decode(imgs[0]))
