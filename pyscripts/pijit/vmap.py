"""ops.vmap(fn, in_axes=0, out_axes=0): fn, written for one example, applied to a batch.

in_axes says which axis of each positional argument is the batch axis: an int for every tensor,
None for an argument shared by all examples, or a tuple with one entry per argument (nested for
tuple and list arguments). out_axes places the batch axis in each output the same way (None: an
output that must not depend on the batched inputs, returned once).

The function runs once, on symbolic tensors of one example's shapes, to record its ops; the
recorded graph is batched op by op (graph/batching.h: each op's batching rule, or a run per
example for ops without one) and compiled. Like MindSpore's and JAX's vmap it is traced once:
Python side effects in fn happen once per call, not once per example. Code that needs tensor
values to go on (item(), bool(), printing), and any call while a gradient tape records, runs fn
once per example instead and stacks the results: the same values, slower.
"""
from pijit import _C

_BREAK = _C.CaptureBreak

# How vmapped calls ran: one batched graph, or once per example (tests and explanations).
stats = {"batched": 0, "per_example": 0}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_axes_spec(who, spec):
    if spec is None or _is_int(spec):
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(who, s)
        return
    raise TypeError("vmap: %s must be an int, None, or a tuple/list of them, got %r" % (who, spec))


def _leaves(value, axis, path, out):
    """Tensors of `value` with their batch axis (tuples and lists are walked; `axis` may be nested)."""
    if isinstance(value, (tuple, list)):
        if isinstance(axis, (tuple, list)):
            if len(axis) != len(value):
                raise ValueError("vmap: in_axes %r has %d entries for %s with %d elements"
                                 % (axis, len(axis), path, len(value)))
            return type(value)(_leaves(v, a, "%s[%d]" % (path, i), out) for i, (v, a) in enumerate(zip(value, axis)))
        return type(value)(_leaves(v, axis, "%s[%d]" % (path, i), out) for i, v in enumerate(value))
    if isinstance(axis, (tuple, list)):
        raise ValueError("vmap: in_axes %r is a sequence but %s is a %s" % (axis, path, type(value).__name__))
    if isinstance(value, _C.TensorBase):
        if axis is not None:
            nd = value.ndim
            if not -nd <= axis < nd:
                raise ValueError("vmap: in_axes %d is out of range for %s with shape %s" % (axis, path, tuple(value.shape)))
            axis %= nd
        out.append((value, axis))
        return _Leaf(len(out) - 1)
    if axis is not None:
        raise ValueError("vmap: %s is a %s, which has no axis %d to map over; give it in_axes None"
                         % (path, type(value).__name__, axis))
    return value


class _Leaf(object):
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _rebuild(template, leaves):
    if isinstance(template, _Leaf):
        return leaves[template.index]
    if isinstance(template, (tuple, list)):
        return type(template)(_rebuild(t, leaves) for t in template)
    return template


def _flatten_out(out, flat):
    if isinstance(out, _C.TensorBase):
        flat.append(out)
        return _Leaf(len(flat) - 1)
    if isinstance(out, (tuple, list)):
        return type(out)(_flatten_out(o, flat) for o in out)
    raise TypeError("vmap: the function returned a %s; outputs must be Tensors or tuples/lists of them"
                    % type(out).__name__)


def _to_front(t, axis):
    if axis == 0:
        return t
    perm = [axis] + [d for d in range(t.ndim) if d != axis]
    return _C.op("transpose", (t,), {"perm": tuple(perm)})


def _from_front(t, axis):
    if axis == 0:
        return t
    nd = t.ndim
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return _C.op("transpose", (t,), {"perm": tuple(perm)})


def _place(template, outs, batched, out_axes, path="output"):
    """The outputs with their batch axes where out_axes says, in fn's structure."""
    if isinstance(template, _Leaf):
        t, axis = outs[template.index], out_axes
        if isinstance(axis, (tuple, list)):
            raise ValueError("vmap: out_axes %r is a sequence but %s is a Tensor" % (axis, path))
        if axis is None:
            if batched[template.index]:
                raise ValueError("vmap: out_axes is None for %s, but it depends on the mapped inputs" % path)
            return t[0]
        nd = t.ndim
        if not -nd <= axis < nd:
            raise ValueError("vmap: out_axes %d is out of range for %s with %d dims" % (axis, path, nd - 1))
        return _from_front(t, axis % nd)
    axes = out_axes if isinstance(out_axes, (tuple, list)) else [out_axes] * len(template)
    if len(axes) != len(template):
        raise ValueError("vmap: out_axes %r has %d entries for %d outputs" % (out_axes, len(axes), len(template)))
    return type(template)(_place(t, outs, batched, a, "%s[%d]" % (path, i))
                          for i, (t, a) in enumerate(zip(template, axes)))


def vmap(fn, in_axes=0, out_axes=0):
    """ops.vmap(fn, in_axes=0, out_axes=0): see the module's documentation."""
    if not callable(fn):
        raise TypeError("vmap: fn must be callable, got %s" % type(fn).__name__)
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    def vmapped(*args):
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ValueError("vmap: in_axes %r has %d entries but the function got %d arguments"
                                 % (in_axes, len(in_axes), len(args)))
            axes = in_axes
        else:
            axes = [in_axes] * len(args)
        found = []
        template = tuple(_leaves(a, ax, "argument %d" % i, found) for i, (a, ax) in enumerate(zip(args, axes)))
        sizes = set(t.shape[ax] for t, ax in found if ax is not None)
        if not sizes:
            raise ValueError("vmap: in_axes maps no Tensor argument (at least one needs an int axis)")
        if len(sizes) > 1:
            raise ValueError("vmap: the mapped axes have different sizes %s" % sorted(sizes))
        B = sizes.pop()
        leaves = [_to_front(t, ax) if ax is not None else t for t, ax in found]
        flags = [ax is not None for _, ax in found]
        structure = []

        def call(*xs):
            out = fn(*_rebuild(template, xs))
            flat = []
            structure[:] = [_flatten_out(out, flat)]
            return flat
        outs = batched = None
        if not _C.tape_active() and B > 0:  # under a gradient every op must run where the tape sees it
            try:
                outs, batched, _ = _C.vmap_run(call, leaves, flags, B)
                stats["batched"] += 1
            except _BREAK:  # fn needs tensor values: run it per example
                pass
        if outs is None:
            outs, batched = _per_example(call, leaves, flags, B)
            stats["per_example"] += 1
        return _place(structure[0], outs, batched, out_axes)
    return vmapped


def _per_example(call, leaves, flags, B):
    """fn once per example, outputs stacked along a new first axis."""
    if B == 0:
        raise ValueError("vmap: the mapped axis has size 0")
    per = []
    for i in range(B):
        per.append(call(*[t[i] if f else t for t, f in zip(leaves, flags)]))
    outs = [_C.op("stack", tuple(p[k] for p in per), {"axis": 0}) for k in range(len(per[0]))]
    # Which outputs depend on the batch is not known here: out_axes None takes the first example's.
    return outs, [False] * len(outs)


__all__ = ["vmap"]
