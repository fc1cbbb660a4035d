"""mindspore.dataset.vision.utils: the enums the image transforms take, with MindSpore's values."""
from enum import Enum, IntEnum

__all__ = ["Inter", "Border", "ImageBatchFormat", "ImageReadMode", "SliceMode", "ConvertMode"]


class Inter(IntEnum):
    """Interpolation modes (cv::resize's for NumPy images)."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, Enum):
    """Padding modes: CONSTANT (fill value), EDGE (repeat the edge), REFLECT (mirror without the
    edge: [1,2,3,4] padded by 2 -> [3,2,1,2,3,4,3,2]), SYMMETRIC (mirror with it: [2,1,1,2,3,4,4,3])."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"

    @staticmethod
    def to_python_type(border_type):
        return border_type.value if isinstance(border_type, Border) else None


class ImageBatchFormat(IntEnum):
    NHWC = 0
    NCHW = 1


class ImageReadMode(IntEnum):
    UNCHANGED = 0
    GRAYSCALE = 1
    COLOR = 2


class SliceMode(IntEnum):
    PAD = 0
    DROP = 1


class ConvertMode(IntEnum):
    COLOR_BGR2BGRA = 0
    COLOR_RGB2RGBA = 0
    COLOR_BGRA2BGR = 1
    COLOR_RGBA2RGB = 1
    COLOR_BGR2RGBA = 2
    COLOR_RGB2BGRA = 2
    COLOR_RGBA2BGR = 3
    COLOR_BGRA2RGB = 3
    COLOR_BGR2RGB = 4
    COLOR_RGB2BGR = 4
    COLOR_BGRA2RGBA = 5
    COLOR_RGBA2BGRA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = 8
    COLOR_GRAY2RGB = 8
    COLOR_GRAY2BGRA = 9
    COLOR_GRAY2RGBA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11
