"""Execution context, MindSpore style: set_context(mode=GRAPH_MODE | PYNATIVE_MODE, ...).

PYNATIVE_MODE runs every op eagerly. Under GRAPH_MODE every Cell call captures its construct as one
graph (pijit.jit with fullgraph=True): what cannot be captured raises pijit.CaptureError naming the
reason and the source line, as MindSpore's static graph mode refuses unsupported syntax.

MindSpore's other context keys are accepted (an unchanged program sets them) and recorded, so
get_context returns them; those that tune MindSpore's own compiler or Ascend runtime change nothing
in pijit, which says so in _NO_EFFECT. An unknown key raises ValueError, as in MindSpore.
"""
from pijit._state import runtime_state

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICE_TARGETS = ("CPU", "GPU")
_state = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0}

# Keys MindSpore 2.x accepts that have no counterpart in pijit, with the type each must have.
_NO_EFFECT = {
    "save_graphs": (bool, int), "save_graphs_path": str, "max_call_depth": int,
    "pynative_synchronize": bool, "enable_graph_kernel": bool, "graph_kernel_flags": str,
    "max_device_memory": str, "mempool_block_size": str, "variable_memory_max_size": str,
    "runtime_num_threads": int, "inter_op_parallel_num": int, "deterministic": str,
    "print_file_path": str, "enable_compile_cache": bool, "compile_cache_path": str,
    "memory_optimize_level": str, "ascend_config": dict, "jit_syntax_level": int,
    "jit_config": dict, "debug_level": int, "check_bprop": bool, "enable_reduce_precision": bool,
    "precompile_only": bool, "reserve_class_name_in_scope": bool, "env_config_path": str,
    "grad_for_scalar": bool, "support_binary": bool, "disable_format_transform": bool,
    "op_timeout": int, "aoe_tune_mode": str, "aoe_config": dict, "gpu_config": dict,
    "memory_offload": str, "enable_dump": bool, "save_dump_path": str,
}
# MindSpore's jit_syntax_level values (mindspore.STRICT / COMPATIBLE / LAX).
STRICT, COMPATIBLE, LAX = 0, 1, 2


def _check_device(value):
    if value == "Ascend":
        raise ValueError("device_target='Ascend': pijit runs on CPU (and GPU with a CUDA build); "
                         "Ascend NPUs are not supported")
    if value not in _DEVICE_TARGETS:
        raise ValueError("set_context: device_target must be one of %s, got %r"
                         % (", ".join(_DEVICE_TARGETS), value))
    if value == "GPU":
        from pijit import _C
        info = _C.gpu_info()
        if not info["usable"]:
            raise RuntimeError("set_context: device_target='GPU' needs a usable NVIDIA GPU: %s" % info["why"])
        names = ", ".join("%s (sm_%d%d)" % ((d["name"],) + tuple(d["capability"])) for d in info["devices"])
        # Refused rather than accepted with every op still running on the CPU.
        raise RuntimeError("set_context: device_target='GPU': pijit found %s but has no GPU kernels yet "
                           "(the GPU backend is in progress); use device_target='CPU'" % names)


@runtime_state("changes the context")
def set_context(**kwargs):
    """set_context(mode=PYNATIVE_MODE, device_target="CPU", device_id=0, ...)."""
    for key, value in kwargs.items():
        if key == "mode":
            if value not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError("set_context: mode must be pijit.GRAPH_MODE (0) or "
                                 "pijit.PYNATIVE_MODE (1), got %r" % (value,))
        elif key == "device_target":
            _check_device(value)
        elif key == "device_id":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("set_context: device_id must be a non-negative int")
        elif key in _NO_EFFECT:
            if not isinstance(value, _NO_EFFECT[key]) or isinstance(value, bool) and \
                    _NO_EFFECT[key] is int:
                raise TypeError("set_context: %s must be %s, got %r"
                                % (key, _type_names(_NO_EFFECT[key]), value))
        else:
            raise ValueError("set_context: unknown context key %r" % (key,))
    for key, value in kwargs.items():
        _state[key] = value
        if key == "mode":
            from pijit import _C
            _C._set_context_mode(value)


def _type_names(t):
    return " or ".join(x.__name__ for x in (t if isinstance(t, tuple) else (t,)))


@runtime_state("reads the context")
def get_context(attr_key):
    """The value set for a context key (its default when never set)."""
    if attr_key in _state:
        return _state[attr_key]
    if attr_key in _NO_EFFECT:
        return None
    raise ValueError("get_context: unknown context key %r" % (attr_key,))


@runtime_state("changes the context")
def set_device(device_target, device_id=None):
    """MindSpore 2.5's set_device(device_target, device_id=None)."""
    kwargs = {"device_target": device_target}
    if device_id is not None:
        kwargs["device_id"] = device_id
    set_context(**kwargs)
