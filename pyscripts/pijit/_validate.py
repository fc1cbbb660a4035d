"""Argument checks for pijit's public entries (setters, jit's options, layer calls), in one place
so that every entry says the same thing the same way, with MindSpore's error types: TypeError
for a value of the wrong type, ValueError for a value out of range, each message naming the
function and the argument:

    For 'set_context', the type of 'max_call_depth' should be int, but got str.
    For 'set_num_threads', the 'num_threads' should be in [1, 1024], but got 1000000000.
    For 'Dense', the type of 'x' should be Tensor, but got NoneType.

bool is never taken for an int (MindSpore's validator refuses it too). Imports nothing from
pijit at module level: the layers and setters that use it import it early.
"""


def _type_names(types):
    names = [t.__name__ if isinstance(t, type) else str(t) for t in types]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _short(value):
    if type(value) is int and value.bit_length() > 128:
        return "an int of %d bits" % value.bit_length()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def type_error(who, arg, value, expected):
    """The TypeError of an argument of the wrong type; `expected` is words ("int", "Tensor")."""
    return TypeError("For '%s', the type of '%s' should be %s, but got %s."
                     % (who, arg, expected, type(value).__name__))


def value_error(who, arg, value, expected):
    """The ValueError of an argument out of range; `expected` says what it should be."""
    return ValueError("For '%s', the '%s' should be %s, but got %s." % (who, arg, expected, _short(value)))


def check_type(who, arg, value, types):
    """`value` is an instance of one of `types` (a type or a tuple); a bool passes only where
    bool itself is named."""
    types = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, types) or (type(value) is bool and bool not in types):
        raise type_error(who, arg, value, _type_names(types))
    return value


def check_bool(who, arg, value):
    if type(value) is not bool:
        raise type_error(who, arg, value, "bool")
    return value


def check_int(who, arg, value, lo=None, hi=None):
    """An int (not a bool) in [lo, hi] (either bound may be None)."""
    if type(value) is bool or not isinstance(value, int):
        raise type_error(who, arg, value, "int")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        if hi is None:
            expected = "an int >= %d" % lo
        elif lo is None:
            expected = "an int <= %d" % hi
        else:
            expected = "in [%d, %d]" % (lo, hi)
        raise value_error(who, arg, value, expected)
    return int(value)


def check_str(who, arg, value, choices=None):
    """A str, one of `choices` when given."""
    if not isinstance(value, str):
        raise type_error(who, arg, value, "str")
    if choices is not None and value not in choices:
        raise value_error(who, arg, value, "one of %s" % ", ".join(repr(c) for c in choices))
    return value


def check_one_of(who, arg, value, choices):
    """One of `choices` (compared by type and value, so True is not 1)."""
    for c in choices:
        if type(c) is type(value) and c == value:
            return value
    raise value_error(who, arg, value, "one of %s" % ", ".join(repr(c) for c in choices))


# ---- layer inputs ------------------------------------------------------------------------------
_tensor_type = []  # pijit._C.TensorBase, resolved on first use (this module imports nothing)


def _is_tensor(x):
    if not _tensor_type:
        from pijit import _C
        _tensor_type.append(_C.TensorBase)
    return isinstance(x, _tensor_type[0])


def check_input(layer, arg, x, ndim=None, min_ndim=0, size=None):
    """The check at the entry of a layer's construct: `x` is a Tensor, of rank `ndim` (an int or a
    tuple of ranks) or at least `min_ndim`, and `size` = (axis, expected, name) says the size at
    `axis` must be `expected`, the layer's attribute `name` ("in_channels"). Sizes are read with Tensor._dims so that a
    dynamic batch size stays dynamic under capture; only the checked axis is specialised."""
    if not _is_tensor(x):
        raise type_error(layer, arg, x, "Tensor")
    rank = x.ndim
    if ndim is not None:
        ranks = ndim if isinstance(ndim, tuple) else (ndim,)
        if rank not in ranks:
            raise ValueError("For '%s', the dimension of '%s' should be %s, but got %d (shape %s)."
                             % (layer, arg, " or ".join(map(str, ranks)), rank, x.shape))
    elif rank < min_ndim:
        raise ValueError("For '%s', the dimension of '%s' should be at least %d, but got %d (shape %s)."
                         % (layer, arg, min_ndim, rank, x.shape))
    if size is not None:
        axis, expected, name = size
        axis = axis % rank
        if x._dims(axis, axis + 1)[0] != expected:
            raise ValueError("For '%s', the size of '%s' at axis %d should be %s=%s, but got shape %s."
                             % (layer, arg, axis, name, expected, x.shape))
    return x


def check_tensor(who, arg, x):
    """`x` is a Tensor (the arguments of a layer that take any rank)."""
    if not _is_tensor(x):
        raise type_error(who, arg, x, "Tensor")
    return x
