"""pijit: a bytecode-capturing JIT for CPython with a MindSpore-style tensor API.

    import pijit as pj
    x = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
    print(x @ x + 1)
"""
from pijit import _C
from pijit._extends.parse import compile_config as _compile_config  # noqa: F401  (MS_JIT's switch for `x += y`)
from pijit import dtype
from pijit.dtype import (bool_, int32, int64, float32, float64, float_, double, int_,
                         as_dtype, float16, half, bfloat16, int8, int16, uint8, uint16, uint32,
                         uint64, complex64, complex128)
from pijit.tensor import Tensor
from pijit.creation import (tensor, ones, zeros, full, fill, ones_like, zeros_like, full_like, empty,
                            arange, linspace, eye, rand, randn, randint, set_seed, get_seed)
from pijit import ops
from pijit.autodiff import grad, value_and_grad, get_grad
from pijit.vmap import vmap
from pijit.explain import explain, cache_entries, reset, set_logs
from pijit.parameter import Parameter, ParameterTuple
from pijit.mutable import mutable
from pijit.signature import Symbol
from pijit.context import (set_context, get_context, set_device, GRAPH_MODE, PYNATIVE_MODE,
                           STRICT, COMPATIBLE, LAX, set_num_threads, MAX_NUM_THREADS)
from pijit.jit import (jit, ms_function, jit_stats, set_stress, stress_stats, reset_stress_stats,
                       set_jit_config, CaptureError, jit_class, ms_class, lazy_inline, set_stance, get_stance)
from pijit import dump as _dump  # PIJIT_DUMP_DIR / PIJIT_TRACE (after jit: its exit hook runs first)
from pijit import common
from pijit import hal, device_context
from pijit.common import dtype as mstype
from pijit import nn
from pijit.serialization import save_checkpoint, load_checkpoint, load_param_into_net
from pijit.common.dtype import dtype_to_nptype, dtype_to_pytype, pytype_to_dtype
from pijit.common import (Type, byte, ubyte, short, ushort, intc, uintc, intp, uintp, single,  # noqa: F401
                          get_py_obj_dtype)
from pijit.ops.primitive import constexpr  # noqa: F401
from pijit.context import (ParallelMode, set_auto_parallel_context, get_auto_parallel_context,  # noqa: F401
                           reset_auto_parallel_context)
from pijit.jit import JitConfig  # noqa: F401
from pijit._verify import VerifyError  # noqa: F401
from pijit.nn.metrics import (Accuracy, F1, Fbeta, Loss, MAE, MSE, Metric, Precision, Recall,  # noqa: F401
                              Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                              TopKCategoricalAccuracy, auc, get_metric_fn, names, rearrange_inputs)
from pijit.ops import vjp  # noqa: F401
from pijit import _import_paths  # noqa: F401  (mindspore.nn.optim.momentum, ... ; after nn)
from pijit import amp  # (after nn)
from pijit.amp import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager, build_train_network

from pijit.train import *  # noqa: F401,F403,E402  (MindSpore exports train.__all__: Model, callbacks)
from pijit._toplevel2 import *  # noqa: F401,F403,E402

__version__ = "0.1.0"

get_num_threads = _C.get_num_threads
cached_storage_bytes = _C.cached_storage_bytes
# Every bounded cache keyed by geometry (oneDNN primitives, convolution and dense plans): name ->
# {size, capacity, hits, misses, evictions, env}; each sized by the environment variable named.
kernel_cache_stats = _C.kernel_cache_stats
release_cached_storage = _C.release_cached_storage
