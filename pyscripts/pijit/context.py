"""Execution context, MindSpore style: set_context(mode=GRAPH_MODE | PYNATIVE_MODE, ...).

PYNATIVE_MODE runs every op eagerly. Under GRAPH_MODE every Cell call captures its construct as one
graph (pijit.jit with fullgraph=True): what cannot be captured raises pijit.CaptureError naming the
reason and the source line, as MindSpore's static graph mode refuses unsupported syntax.
"""
from pijit._state import runtime_state

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICE_TARGETS = ("CPU", "GPU")
_state = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0}


@runtime_state("changes the context")
def set_context(**kwargs):
    """set_context(mode=PYNATIVE_MODE, device_target="CPU", device_id=0)."""
    for key, value in kwargs.items():
        if key == "mode":
            if value not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError("set_context: mode must be pijit.GRAPH_MODE (0) or "
                                 "pijit.PYNATIVE_MODE (1), got %r" % (value,))
        elif key == "device_target":
            if value not in _DEVICE_TARGETS:
                raise ValueError("set_context: device_target must be one of %s, got %r"
                                 % (", ".join(_DEVICE_TARGETS), value))
            if value == "GPU":
                from pijit import _C
                if not getattr(_C, "gpu_available", lambda: False)():
                    raise RuntimeError("set_context: device_target='GPU' but this pijit build "
                                       "has no usable CUDA device")
        elif key == "device_id":
            if not isinstance(value, int) or value < 0:
                raise ValueError("set_context: device_id must be a non-negative int")
        else:
            raise ValueError("set_context: unknown context key %r (pijit knows: mode, "
                             "device_target, device_id)" % (key,))
        _state[key] = value
        if key == "mode":
            from pijit import _C
            _C._set_context_mode(value)


def get_context(key):
    if key not in _state:
        raise ValueError("get_context: unknown context key %r" % (key,))
    return _state[key]
