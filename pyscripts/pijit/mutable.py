"""MindSpore's mutable(): marks a graph input whose value may change between calls, so compiled
graphs do not specialise on it.

An int or a float comes back as an equal number that jitted code treats as a graph input: where
captured code meets a tensor with it in an arithmetic operator or a comparison (`x * lr`,
`x > thr`) the graph takes it as an input instead of baking it in, so a new value reuses the graph.
Any other use of it (a branch on it, a size, range()) still guards its exact value. Tuples, lists
and dicts come back as new containers of marked numbers; tensors are graph inputs anyway.
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
    return _marked(input_data)


def _marked(x):
    if isinstance(x, bool) or type(x) not in (int, float, tuple, list, dict):
        return x
    if type(x) in (int, float):
        return _C._mutable_number(x)
    if type(x) is dict:
        return {k: _marked(v) for k, v in x.items()}
    return type(x)(_marked(v) for v in x)
