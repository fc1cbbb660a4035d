"""mindspore dtypes (mstype.int32, ...) as the numpy dtypes the pipeline's arrays carry."""
from pijit.dataset._compat import np


def to_numpy_dtype(t):
    if t is None:
        return None
    name = getattr(t, "name", None) or str(t)
    name = {"bool": "bool_", "bool_": "bool_", "string": "str_"}.get(name, name)
    try:
        return np.dtype(getattr(np, name) if hasattr(np, name) else name)
    except Exception:
        raise TypeError("Unknown column type: %s." % (t,)) from None
