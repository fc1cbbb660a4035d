"""MindSpore's hal: the devices this machine has, as pijit can use them.

    import pijit as pj                                   # or: import mindspore as ms
    target = "GPU" if pj.hal.is_available("GPU") else "CPU"

The GPU answers come from the GPU backend's probe (pijit._C.gpu_info(): the CUDA libraries are
opened at run time, so a CPU-only machine answers "no GPU" with the reason). There are no GPU
kernels yet (issue 19): is_available("GPU") is True only where a device, its driver and the CUDA
libraries are all there, and set_context(device_target="GPU") still refuses with a message that
says so. Ascend is never available.
"""
from pijit import _C

_TARGETS = ("CPU", "GPU", "Ascend")


def _target(device_target):
    if device_target is None:
        from pijit.context import get_context
        return get_context("device_target")
    if device_target not in _TARGETS:
        raise ValueError("device_target must be one of %s, got %r" % (", ".join(_TARGETS), device_target))
    return device_target


def _gpu():
    return _C.gpu_info()


def is_available(device_target):
    """Whether pijit can reach a device of this kind on this machine."""
    target = _target(device_target)
    if target == "CPU":
        return True
    return target == "GPU" and _gpu()["usable"]


def is_initialized(device_target):
    """Whether the device's runtime has been started: the CPU always; a GPU never yet (pijit
    starts no CUDA context until it has GPU kernels to run)."""
    return _target(device_target) == "CPU"


def device_count(device_target=None):
    """Devices of this kind pijit can use: 1 CPU; the GPUs the driver shows (0 when the backend
    is not usable)."""
    target = _target(device_target)
    if target == "CPU":
        return 1
    if target == "GPU":
        info = _gpu()
        return len(info["devices"]) if info["usable"] else 0
    return 0


def _device(device_id, device_target):
    target = _target(device_target)
    if isinstance(device_id, bool) or not isinstance(device_id, int):
        raise TypeError("device_id must be an int, got %r" % (device_id,))
    if target != "GPU":
        raise ValueError("device queries by id are for GPUs; device_target is %r" % (target,))
    info = _gpu()
    if not info["usable"]:
        raise RuntimeError("no usable GPU: %s" % info["why"])
    if not 0 <= device_id < len(info["devices"]):
        raise ValueError("device_id %d is out of range: %d GPU(s) visible" % (device_id, len(info["devices"])))
    return info["devices"][device_id]


class DeviceProperties(object):
    """What get_device_properties returns (MindSpore's names): name, major, minor, total_memory
    (bytes), multi_processor_count."""

    def __init__(self, d):
        self.name = d["name"]
        self.major, self.minor = d["capability"]
        self.total_memory = d["total_memory"]
        self.multi_processor_count = d["multiprocessors"]

    def __repr__(self):
        return ("_DeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, multi_processor_count=%d)"
                % (self.name, self.major, self.minor, self.total_memory // (1 << 20), self.multi_processor_count))


def get_device_name(device_id, device_target=None):
    return _device(device_id, device_target)["name"]


def get_device_capability(device_id, device_target=None):
    """(major, minor) of a GPU; None for the CPU, as MindSpore returns."""
    if _target(device_target) == "CPU":
        return None
    return tuple(_device(device_id, device_target)["capability"])


def get_device_properties(device_id, device_target=None):
    return DeviceProperties(_device(device_id, device_target))


def get_arch_list(device_target=None):
    """The GPU architectures pijit generates code for: those of the visible devices (its device
    code is compiled at run time, for the device at hand); None for the CPU."""
    target = _target(device_target)
    if target != "GPU":
        return None
    info = _gpu()
    if not info["usable"]:
        return []
    return sorted({"sm_%d%d" % tuple(d["capability"]) for d in info["devices"]})
