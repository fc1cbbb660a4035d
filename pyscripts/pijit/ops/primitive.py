"""`mindspore.ops.primitive`: the base classes and decorators of user-defined primitives.

    class MyOp(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, alpha=1.0): ...
        def __call__(self, x): return x * self.alpha

    @constexpr
    def shape_product(shape): ...      # a function of constants (shapes, dtypes, Python numbers)

pijit runs Python as Python, so a constexpr function is simply called (under jit its constant
inputs make its result a constant of the graph). A primitive's attributes recorded by
prim_attr_register are in `self.attrs` and readable as attributes, as MindSpore's are.
"""
import functools
import inspect

from pijit.ops.primitives import Primitive


def constexpr(fn=None, get_instance=True, reuse_result=True, check=True):
    """MindSpore's @constexpr and @constexpr(...): returns the function itself (pijit evaluates
    Python on constants directly); get_instance/reuse_result/check have nothing to choose here."""
    if fn is None:
        return lambda f: constexpr(f, get_instance, reuse_result, check)
    if not callable(fn):
        raise TypeError("constexpr: expected a function, got %s" % type(fn).__name__)
    return fn


def prim_attr_register(fn):
    """Decorates a Primitive subclass's __init__: every argument it is called with (defaults
    included) becomes an attribute of the primitive, in self.attrs and as self.<name>."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if not hasattr(self, "attrs"):
            Primitive.__init__(self)
        for name, value in list(bound.arguments.items())[1:]:
            kind = sig.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            self.attrs[name] = value
            object.__setattr__(self, name, value)
        fn(self, *args, **kwargs)
    return deco


def _abstract(x):
    """(shape, dtype, value) of an input as MindSpore hands them to check_*/infer_*: a Tensor's
    shape as a list and its type as tensor_type(dtype); a Python scalar's shape [] and its
    scalar type; a tuple or list of inputs as the list of their shapes and the tuple of types."""
    from pijit import _C
    from pijit import dtype as _dt
    from pijit._toplevel2 import tensor_type
    if isinstance(x, _C.TensorBase):
        return list(x.shape), tensor_type(x.dtype), x
    if isinstance(x, (tuple, list)):
        items = [_abstract(v) for v in x]
        return [i[0] for i in items], tuple(i[1] for i in items), x
    if isinstance(x, bool):
        return [], _dt.bool_, x
    if isinstance(x, int):
        return [], _dt.int64, x
    if isinstance(x, float):
        return [], _dt.float32, x
    if isinstance(x, _dt.Type):
        return [], x, x
    return [], None, x


def _kernel(prim):
    """The primitive of pijit.ops named as prim's class (MindSpore runs the kernel registered
    under the primitive's name), built from prim's recorded attributes; None if there is none."""
    import pijit.ops as ops
    cls = getattr(ops, prim.name, None)
    if not isinstance(cls, type) or not issubclass(cls, Primitive) or isinstance(prim, cls):
        return None
    attrs = {k: v for k, v in prim.attrs.items() if k not in ("input_names", "output_names")}
    try:
        return cls(**attrs)
    except TypeError:
        return cls() if attrs else None


class PrimitiveWithCheck(Primitive):
    """A primitive whose subclass defines check_shape/check_dtype and how it computes. Each call
    first runs check_dtype then check_shape, given the inputs' types and shapes as MindSpore gives
    them (a Tensor's: tensor_type(dtype) and its shape as a list), so their errors are raised
    before anything runs. The computation: the subclass's __call__, else the pijit.ops primitive
    of the class's name (MindSpore's kernel registered under the name)."""

    def __init__(self, name=None, **attrs):
        Primitive.__init__(self, **attrs)
        if name is not None:
            self.name = name

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the checks run ahead of a __call__ the subclass writes itself
        fn = cls.__dict__.get("__call__")
        if fn is not None and not getattr(fn, "_pijit_checked", False):
            def call(self, *args, **kw):
                if self._user_checks():
                    value = self.__check__(*args)
                    if value is not None:
                        return value
                return fn(self, *args, **kw)
            functools.update_wrapper(call, fn)
            call._pijit_checked = True
            cls.__call__ = call

    def _user_checks(self):
        tp = type(self)
        return tp.check_shape is not PrimitiveWithCheck.check_shape or \
            tp.check_dtype is not PrimitiveWithCheck.check_dtype

    def __check__(self, *args):
        """Runs the checks on args; a value (PrimitiveWithInfer's infer_value) replaces the result."""
        shapes, dtypes, _ = _split(args)
        self.check_dtype(*dtypes)
        self.check_shape(*shapes)
        return None

    def add_prim_attr(self, name, value):
        self.attrs[name] = value
        object.__setattr__(self, name, value)
        return self

    def init_prim_io_names(self, inputs, outputs):
        self.add_prim_attr("input_names", list(inputs))
        return self.add_prim_attr("output_names", list(outputs))

    def check_shape(self, *shapes):
        return None

    def check_dtype(self, *dtypes):
        return None

    def __call__(self, *args):
        if self._user_checks():
            self.__check__(*args)
        kernel = _kernel(self)
        if kernel is None:
            raise NotImplementedError(
                "%s: a PrimitiveWithCheck subclass must define __call__ to run in pijit (no pijit "
                "primitive is named %s); MindSpore would run its registered kernel" % (self.name, self.name))
        return kernel(*args)


def _split(args):
    items = [_abstract(a) for a in args]
    return [i[0] for i in items], [i[1] for i in items], [i[2] for i in items]


class PrimitiveWithInfer(PrimitiveWithCheck):
    """A primitive whose subclass defines infer_shape/infer_dtype/infer_value (MindSpore's static
    inference) and how it computes. Each call runs infer_dtype, infer_shape, then infer_value, as
    MindSpore's PyNative mode does (their errors raised before anything runs); a value other than
    None from infer_value is the result; otherwise the subclass's __call__ computes, else the
    pijit.ops primitive of the class's name."""

    def infer_shape(self, *shapes):
        return shapes[0] if shapes else None

    def infer_dtype(self, *dtypes):
        return dtypes[0] if dtypes else None

    def infer_value(self, *values):
        return None

    def _user_checks(self):
        tp = type(self)
        return any(getattr(tp, n) is not getattr(PrimitiveWithInfer, n)
                   for n in ("infer_shape", "infer_dtype", "infer_value"))

    def __check__(self, *args):
        shapes, dtypes, values = _split(args)
        self.infer_dtype(*dtypes)
        self.infer_shape(*shapes)
        return self.infer_value(*values)

    def __call__(self, *args):
        value = self.__check__(*args)
        if value is not None:
            return value
        kernel = _kernel(self)
        if kernel is None:
            raise NotImplementedError(
                "%s: a PrimitiveWithInfer subclass must define __call__ (or infer_value) to run in "
                "pijit; MindSpore would run its registered kernel" % self.name)
        return kernel(*args)


__all__ = ["Primitive", "PrimitiveWithCheck", "PrimitiveWithInfer", "constexpr", "prim_attr_register"]
