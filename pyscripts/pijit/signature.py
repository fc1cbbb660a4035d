"""input_signature and Cell.set_inputs: placeholders whose None or Symbol sizes are dynamic.

    x_spec = pj.Tensor(shape=[None, 4], dtype=pj.float32)
    f = pj.jit(fn, input_signature=(x_spec,))      # or net.set_inputs(x_spec); pj.jit(net)

Those sizes get symbols from the first call (one graph serves every batch size >= 2; 0 and 1 stay
exact, as everywhere), and every call is checked against the signature as MindSpore checks it: a
wrong dtype is a TypeError, a wrong rank or fixed size, or a size outside a Symbol's facts, a
ValueError. The check is a Python call per call of the jitted function.
"""
from pijit import _C


class Symbol(object):
    """Symbol(max=0, min=1, divisor=1, remainder=0, unique=False): one dynamic size of a
    placeholder, with facts every call must satisfy: min <= size, size <= max (max=0: no bound),
    size % divisor == remainder. A Symbol with unique=True used for several sizes makes them equal."""

    _pijit_symbol = True

    def __init__(self, max=0, min=1, divisor=1, remainder=0, unique=False):
        for name, v in (("max", max), ("min", min), ("divisor", divisor), ("remainder", remainder)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("Symbol: %s must be an int, got %s" % (name, type(v).__name__))
        if not isinstance(unique, bool):
            raise TypeError("Symbol: unique must be a bool, got %s" % type(unique).__name__)
        if min < 1:
            raise ValueError("Symbol: min must be >= 1, got %d" % min)
        if max < 0 or (max and max < min):
            raise ValueError("Symbol: max must be 0 (no bound) or >= min (%d), got %d" % (min, max))
        if divisor < 1:
            raise ValueError("Symbol: divisor must be >= 1, got %d" % divisor)
        if not 0 <= remainder < divisor:
            raise ValueError("Symbol: remainder must be in [0, divisor=%d), got %d" % (divisor, remainder))
        self.max, self.min, self.divisor, self.remainder, self.unique = max, min, divisor, remainder, unique

    def violated(self, size):
        """The fact `size` breaks, in words, or None."""
        if size < self.min:
            return "%d < min=%d" % (size, self.min)
        if self.max and size > self.max:
            return "%d > max=%d" % (size, self.max)
        if size % self.divisor != self.remainder:
            return "%d %% %d != %d" % (size, self.divisor, self.remainder)
        return None

    def __repr__(self):
        return "Symbol(max=%d, min=%d, divisor=%d, remainder=%d, unique=%r)" % (
            self.max, self.min, self.divisor, self.remainder, self.unique)


def _spec_text(spec):
    return "(%s)" % ", ".join("None" if d is None else repr(d) for d in spec)


def _parameters(fn):
    """(names of fn's positional parameters the signature describes, how many leading call
    arguments are not described: a decorated construct's self)."""
    target = fn.construct if hasattr(fn, "construct") else fn
    bound = hasattr(target, "__self__") and hasattr(target, "__func__")
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None:
        raise TypeError("input_signature needs a Python function, method or Cell, got %s"
                        % type(fn).__name__)
    names = list(code.co_varnames[:code.co_argcount])
    if bound:
        return names[1:], 0
    if names and names[0] == "self":  # a Cell's construct decorated in the class body
        return names[1:], 1
    return names, 0


def compile_signature(fn, signature, where):
    """(check_args, signature_dims) for JitFunction from an input_signature (a Tensor or a tuple or
    list of Tensors and Nones; a None entry accepts anything)."""
    from pijit.tensor import Tensor
    entries = tuple(signature) if isinstance(signature, (tuple, list)) else (signature,)
    names, skip = _parameters(fn)
    if len(entries) > len(names):
        raise ValueError("%s: input_signature has %d entries but %s takes %d positional parameters (%s)"
                         % (where, len(entries), getattr(fn, "__name__", type(fn).__name__),
                            len(names), ", ".join(names)))
    specs, dims = [], []
    for i, e in enumerate(entries):
        if e is None:
            specs.append(None)
            continue
        if not isinstance(e, _C.TensorBase):
            raise TypeError("%s: input_signature[%d] must be a Tensor (a placeholder such as "
                            "Tensor(shape=[None, 4], dtype=float32)) or None, got %s"
                            % (where, i, type(e).__name__))
        spec = tuple(getattr(e, "_input_spec", e.shape))
        specs.append((e.dtype, spec))
        dims.extend("%s#%d" % (names[i], d) for d, s in enumerate(spec)
                    if s is None or isinstance(s, Symbol))

    def check_args(args):
        if len(args) - skip < len(specs):
            raise TypeError("%s: input_signature describes %d positional arguments, the call passes %d"
                            % (where, len(specs), len(args) - skip))
        unique = {}
        for i, sd in enumerate(specs):
            if sd is None:
                continue
            a = args[i + skip]
            dtype, spec = sd
            if not isinstance(a, Tensor):
                raise TypeError("%s: argument %d (%s) must be a Tensor as input_signature says, got %s"
                                % (where, i, names[i], type(a).__name__))
            if a.dtype != dtype:
                raise TypeError("%s: argument %d (%s) has dtype %s, input_signature says %s"
                                % (where, i, names[i], a.dtype, dtype))
            shape = a.shape
            bad = len(shape) != len(spec)
            why = "rank %d against %d" % (len(shape), len(spec)) if bad else ""
            for d, s in enumerate(spec if not bad else ()):
                if isinstance(s, Symbol):
                    why = s.violated(shape[d])
                    if why is None and s.unique and unique.setdefault(id(s), shape[d]) != shape[d]:
                        why = "a unique Symbol's sizes differ (%d and %d)" % (unique[id(s)], shape[d])
                    if why:
                        why = "dim %d: %s" % (d, why)
                elif s is not None and s != shape[d]:
                    why = "dim %d is %d, not %d" % (d, shape[d], s)
                if why:
                    break
            if why:
                raise ValueError("%s: argument %d (%s) does not match input_signature: shape %s against %s (%s)"
                                 % (where, i, names[i], tuple(shape), _spec_text(spec), why))

    return check_args, dims
