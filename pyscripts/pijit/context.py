"""Execution context, MindSpore style: set_context(mode=GRAPH_MODE | PYNATIVE_MODE, ...).

PYNATIVE_MODE runs every op eagerly. Under GRAPH_MODE every Cell call captures its construct as one
graph (pijit.jit with fullgraph=True): what cannot be captured raises pijit.CaptureError naming the
reason and the source line, as MindSpore's static graph mode refuses unsupported syntax.

MindSpore's other context keys are accepted (an unchanged program sets them) and recorded, so
get_context returns them; those that tune MindSpore's own compiler or Ascend runtime change nothing
in pijit, which says so in _NO_EFFECT. An unknown key raises ValueError, as in MindSpore.
"""
import os
import re

from pijit._state import runtime_state
from pijit._validate import check_int, check_str, check_type, type_error, value_error

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICE_TARGETS = ("CPU", "GPU")
_state = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0}

# Keys MindSpore 2.x accepts that have no counterpart in pijit, with the type each must have and,
# where MindSpore bounds it, the values it may take: ("range", lo, hi) (hi None: no upper bound),
# ("choices", values) or ("size",) (a memory size such as "4GB", MindSpore's format).
_NO_EFFECT = {
    "save_graphs": ((bool, int), ("range", 0, 3)), "save_graphs_path": (str, None),
    "max_call_depth": (int, ("range", 1, None)), "pynative_synchronize": (bool, None),
    "enable_graph_kernel": (bool, None), "graph_kernel_flags": (str, None),
    "max_device_memory": (str, ("size",)), "mempool_block_size": (str, ("size",)),
    "variable_memory_max_size": (str, ("size",)), "runtime_num_threads": (int, ("range", 0, None)),
    "inter_op_parallel_num": (int, ("range", 0, None)), "deterministic": (str, ("choices", ("ON", "OFF"))),
    "print_file_path": (str, None), "enable_compile_cache": (bool, None), "compile_cache_path": (str, None),
    "memory_optimize_level": (str, ("choices", ("O0", "O1"))), "ascend_config": (dict, None),
    "jit_syntax_level": (int, ("range", 0, 2)), "jit_config": (dict, None), "debug_level": (int, ("range", 0, 1)),
    "check_bprop": (bool, None), "enable_reduce_precision": (bool, None), "precompile_only": (bool, None),
    "reserve_class_name_in_scope": (bool, None), "env_config_path": (str, None), "grad_for_scalar": (bool, None),
    "support_binary": (bool, None), "disable_format_transform": (bool, None), "op_timeout": (int, ("range", 0, None)),
    "aoe_tune_mode": (str, ("choices", ("online", "offline"))), "aoe_config": (dict, None), "gpu_config": (dict, None),
    "memory_offload": (str, ("choices", ("ON", "OFF"))), "enable_dump": (bool, None), "save_dump_path": (str, None),
}
# MindSpore's jit_syntax_level values (mindspore.STRICT / COMPATIBLE / LAX).
STRICT, COMPATIBLE, LAX = 0, 1, 2
# The most device ids MindSpore accepts (device_id in [0, 4095]).
_MAX_DEVICE_ID = 4095
_SIZE = re.compile(r"^([1-9][0-9]*(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*)GB$")


# set_num_threads' bound: 1024 threads, or the CPU count where a machine has more. Past the CPU
# count threads only oversubscribe, and each costs a stack and a place in every parallel region;
# an absurd count (10**9) would otherwise fail inside the next kernel as a bare MemoryError.
MAX_NUM_THREADS = max(1024, os.cpu_count() or 1)


@runtime_state("changes the number of threads")
def set_num_threads(num_threads):
    """Threads used by pijit's kernels and oneDNN: an int in [1, MAX_NUM_THREADS]."""
    from pijit import _C
    _C.set_num_threads(check_int("set_num_threads", "num_threads", num_threads, 1, MAX_NUM_THREADS))


def _check_device(value):
    check_str("set_context", "device_target", value)
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


def _check_no_effect(key, value):
    types, rule = _NO_EFFECT[key]
    if types is int or isinstance(types, tuple) and int in types and bool not in types:
        check_int("set_context", key, value)  # (a bool is no int here)
    else:
        check_type("set_context", key, value, types)
    if rule is None:
        return
    if rule[0] == "range":
        check_int("set_context", key, int(value), rule[1], rule[2])
    elif rule[0] == "choices":
        check_str("set_context", key, value, rule[1])
    elif not _SIZE.match(value):
        raise value_error("set_context", key, value, "a size in GB such as '4GB' or '0.5GB'")


@runtime_state("changes the context")
def set_context(**kwargs):
    """set_context(mode=PYNATIVE_MODE, device_target="CPU", device_id=0, ...). Every key is
    checked before any is set: a wrong type raises TypeError, a wrong value ValueError, naming
    the key (MindSpore's types)."""
    for key, value in kwargs.items():
        if key == "mode":
            if type(value) is not int:
                raise type_error("set_context", "mode", value, "int (pijit.GRAPH_MODE or pijit.PYNATIVE_MODE)")
            if value not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError("set_context: mode must be pijit.GRAPH_MODE (0) or "
                                 "pijit.PYNATIVE_MODE (1), got %r" % (value,))
        elif key == "device_target":
            _check_device(value)
        elif key == "device_id":
            check_int("set_context", "device_id", value, 0, _MAX_DEVICE_ID)
        elif key in _NO_EFFECT:
            _check_no_effect(key, value)
        else:
            raise ValueError("set_context: unknown context key %r" % (key,))
    for key, value in kwargs.items():
        _state[key] = value
        if key == "mode":
            from pijit import _C
            _C._set_context_mode(value)


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


class ParallelMode(object):
    """MindSpore's parallel modes (the values of set_auto_parallel_context(parallel_mode=...)).
    pijit runs one process, which is STAND_ALONE."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


# set_auto_parallel_context's keys and MindSpore 2.5's defaults. pijit runs one process: the
# values are kept and read back (programs set them before building their networks), and
# nothing else changes; data parallelism across processes is issue 48's.
_AUTO_PARALLEL_DEFAULTS = {
    "device_num": 1, "global_rank": 0, "gradients_mean": False, "gradient_fp32_sync": True,
    "loss_repeated_mean": True, "parallel_mode": ParallelMode.STAND_ALONE,
    "search_mode": "recursive_programming", "auto_parallel_search_mode": "recursive_programming",
    "parameter_broadcast": False, "strategy_ckpt_load_file": "", "strategy_ckpt_save_file": "",
    "full_batch": False, "dataset_strategy": "data_parallel", "enable_parallel_optimizer": False,
    "enable_alltoall": False, "all_reduce_fusion_config": [], "pipeline_stages": 1,
    "pipeline_result_broadcast": False, "grad_accumulation_step": 1, "parallel_optimizer_config": {},
    "comm_fusion": {}, "strategy_ckpt_config": {}, "auto_pipeline": False, "group_ckpt_save_file": "",
}
_auto_parallel = dict(_AUTO_PARALLEL_DEFAULTS)


def set_auto_parallel_context(**kwargs):
    """MindSpore's set_auto_parallel_context: keeps each known setting (ValueError for an unknown
    key or parallel mode, TypeError for a wrongly typed count), read back by
    get_auto_parallel_context. One process: the settings describe, they do not distribute."""
    for key, value in kwargs.items():
        if key not in _AUTO_PARALLEL_DEFAULTS:
            raise ValueError("For 'set_auto_parallel_context', the key %r is not supported; supported: %s"
                             % (key, ", ".join(sorted(_AUTO_PARALLEL_DEFAULTS))))
        if key == "parallel_mode" and value not in ParallelMode.MODE_LIST:
            raise ValueError("For 'set_auto_parallel_context', 'parallel_mode' must be one of %s, got %r"
                             % (ParallelMode.MODE_LIST, value))
        if key in ("device_num", "global_rank", "pipeline_stages", "grad_accumulation_step"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("For 'set_auto_parallel_context', '%s' must be an int, got %s"
                                % (key, type(value).__name__))
            if value < (0 if key == "global_rank" else 1):
                raise ValueError("For 'set_auto_parallel_context', '%s' must be >= %d, got %d"
                                 % (key, 0 if key == "global_rank" else 1, value))
    _auto_parallel.update(kwargs)


def get_auto_parallel_context(attr_key):
    if attr_key not in _auto_parallel:
        raise ValueError("For 'get_auto_parallel_context', the key %r is not supported" % (attr_key,))
    return _auto_parallel[attr_key]


def reset_auto_parallel_context():
    _auto_parallel.clear()
    _auto_parallel.update(_AUTO_PARALLEL_DEFAULTS)
