"""`mindspore.ops.composite` (imported as C): functions built from other functions.
HyperMap, MultitypeFuncGraph and GradOperation (pijit/autodiff.py)."""
from pijit import _C
from pijit.ops.primitives import HyperMap, Partial  # noqa: F401
from pijit.autodiff import GradOperation  # noqa: F401
from pijit.ops.misc import clip_by_value  # noqa: F401  (C.clip_by_value, as MindSpore's composite has it)

# Type names MultitypeFuncGraph.register accepts, each with its test and how specific it is
# (the most specific registration wins: "Int" over "Number").
_TYPE_TESTS = {
    "Tensor": (lambda v: isinstance(v, _C.TensorBase), 1),
    "Number": (lambda v: isinstance(v, (int, float)), 1),
    "Int": (lambda v: isinstance(v, int) and not isinstance(v, bool), 2),
    "Float": (lambda v: isinstance(v, float), 2),
    "Bool": (lambda v: isinstance(v, bool), 2),
    "String": (lambda v: isinstance(v, str), 2),
    "Tuple": (lambda v: isinstance(v, tuple), 2),
    "List": (lambda v: isinstance(v, list), 2),
    "Dictionary": (lambda v: isinstance(v, dict), 2),
    "Dict": (lambda v: isinstance(v, dict), 2),
    "None": (lambda v: v is None, 2),
    "Function": (lambda v: callable(v) and not isinstance(v, (type, _C.TensorBase)), 1),
}


class MultitypeFuncGraph(object):
    """MultitypeFuncGraph(name, read_value=False): a function overloaded on its inputs' types.

        add = MultitypeFuncGraph("add")
        @add.register("Number", "Number")
        def _(x, y): return x + y
        @add.register("Tensor", "Tensor")
        def _(x, y): return ops.add(x, y)
    A call runs the registration whose type names match the arguments most specifically
    (ValueError when none does); HyperMap maps it over nested sequences."""

    def __init__(self, name, read_value=False):
        if not isinstance(name, str):
            raise TypeError("MultitypeFuncGraph: name must be a str, got %s" % type(name).__name__)
        self.name = name
        self.read_value = bool(read_value)
        self.entries = []

    def register(self, *type_names):
        for t in type_names:
            if t not in _TYPE_TESTS:
                raise TypeError("MultitypeFuncGraph %r: unknown type name %r (pijit knows %s)"
                                % (self.name, t, ", ".join(sorted(_TYPE_TESTS))))

        def deco(fn):
            self.entries.append((type_names, fn))
            return fn
        return deco

    def __call__(self, *args):
        best, best_score = None, -1
        for names, fn in self.entries:
            if len(names) != len(args):
                continue
            score = 0
            for n, a in zip(names, args):
                test, weight = _TYPE_TESTS[n]
                if not test(a):
                    break
                score += weight
            else:
                if score > best_score:
                    best, best_score = fn, score
        if best is None:
            raise ValueError("MultitypeFuncGraph %r: no function registered for argument types "
                             "(%s)" % (self.name, ", ".join(_type_name(a) for a in args)))
        return best(*args)

    def __repr__(self):
        return "MultitypeFuncGraph(%r)" % (self.name,)


def _type_name(v):
    return "Tensor" if isinstance(v, _C.TensorBase) else type(v).__name__


class Map(object):
    """Map(ops=None, reverse=False): applies a function to the elements of tuples or lists of the
    same length, one level deep (HyperMap recurses into nested sequences; Map does not):
    Map()(fn, (a, b), (c, d)) is (fn(a, c), fn(b, d)). With `ops` given, call it as map(*inputs).
    `reverse` applies the function from the last element to the first (the order of side
    effects); the result keeps the input order."""

    def __init__(self, ops=None, reverse=False):
        self.ops = ops
        self.reverse = bool(reverse)

    def __call__(self, *args):
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0] if args else None, args[1:])
        if not callable(fn):
            raise TypeError("Map: the function to map must be callable, got %s" % type(fn).__name__)
        if not seqs:
            raise TypeError("Map: no inputs to map over")
        kind = type(seqs[0])
        for s in seqs:
            if not isinstance(s, (tuple, list)) or type(s) is not kind:
                raise TypeError("Map: inputs must all be tuples or all lists, got %s"
                                % ", ".join([type(v).__name__ for v in seqs]))
            if len(s) != len(seqs[0]):
                raise ValueError("Map: inputs must have the same length, got %s"
                                 % ", ".join([str(len(v)) for v in seqs]))
        n = len(seqs[0])
        order = range(n - 1, -1, -1) if self.reverse else range(n)
        out = {}
        for i in order:
            out[i] = fn(*[s[i] for s in seqs])
        return kind([out[i] for i in range(n)])

    def __repr__(self):
        return "Map(reverse=%s)" % self.reverse


__all__ = ["HyperMap", "Map", "MultitypeFuncGraph", "GradOperation", "Partial", "clip_by_value"]
