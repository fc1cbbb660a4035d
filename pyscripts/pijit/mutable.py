"""MindSpore's mutable(): marks a graph input whose value may change between calls, so compiled
graphs do not specialise on it.

pijit accepts the MindSpore forms and checks them as MindSpore does. Capture still guards on the
values of Python numbers it reads (lifting them to graph inputs is the dynamic-shapes issue), so
today the mark documents intent without changing what is compiled; results are the same.
"""
from pijit import _C


def _check(x, path):
    if isinstance(x, _C.TensorBase) or isinstance(x, (int, float)) and not isinstance(x, bool):
        return
    if isinstance(x, (tuple, list)):
        for i, v in enumerate(x):
            _check(v, "%s[%d]" % (path, i))
        return
    if isinstance(x, dict):
        for k, v in x.items():
            _check(v, "%s[%r]" % (path, k))
        return
    raise TypeError("mutable(): input_data must be a Tensor, int, float, or a tuple, list or "
                    "dict of them; %s is a %s" % (path, type(x).__name__))


def mutable(input_data, dynamic_len=False):
    """mutable(input_data, dynamic_len=False) -> input_data, checked."""
    if not isinstance(dynamic_len, bool):
        raise TypeError("mutable(): dynamic_len must be a bool, got %s" % type(dynamic_len).__name__)
    if dynamic_len and not isinstance(input_data, (tuple, list)):
        raise ValueError("mutable(): dynamic_len=True needs a tuple or list, got %s"
                         % type(input_data).__name__)
    _check(input_data, "input_data")
    return input_data
