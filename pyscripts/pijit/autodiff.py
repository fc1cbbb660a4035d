"""Gradients with MindSpore's API: ops.GradOperation, grad, value_and_grad, stop_gradient.

All of them run the function once on a gradient tape (pijit._C.Tape, graph/tape.h) that records
the ops reading the inputs and weights asked for, then run the ops' gradient rules backwards
(graph/grads/: the rules jitted code differentiates graphs with). A Cell that defines
`bprop(self, *inputs, out, dout)` is differentiated by it instead of by its construct.

Floating and complex tensors have gradients (complex ones as torch.autograd defines them, the
conjugate convention): an integer or boolean input's gradient is zeros of its own dtype, as is the
gradient of an input the outputs do not depend on.
"""
from pijit import _C
from pijit import parameter as _param

_ALL = "all"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _full_like(t, value):
    # (an op reading t's shape, not Python: captured with dynamic sizes, the size stays a symbol)
    return _C.op("full_like", (t,), {"value": value, "dtype": t.dtype})


def _zeros_like(t):
    return _C.op("full_like", (t,), {"value": 0, "dtype": t.dtype})


def _leaves(who, out, where, acc, constants=False):
    """The Tensors of a (nested) tuple, list or dict output, in order (a dict by its values). With
    constants, other leaves (numbers, dtypes, None, strings) are skipped: MindSpore treats a
    non-Tensor output as a constant, which contributes no gradient."""
    if isinstance(out, _C.TensorBase):
        acc.append(out)
    elif isinstance(out, (tuple, list)):
        for k, o in enumerate(out):
            _leaves(who, o, "%s%s%d" % (where, "." if where else "", k), acc, constants)
    elif isinstance(out, dict):
        for k, o in out.items():
            _leaves(who, o, "%s%s%s" % (where, "." if where else "", k), acc, constants)
    elif not constants:
        raise TypeError("%s: the function's output %s is a %s; only Tensor outputs can be "
                        "differentiated" % (who, where or "0", type(out).__name__))
    return acc


def _as_outputs(who, out):
    """The Tensors to differentiate: every Tensor of a tuple, list or dict output (MindSpore's
    default sensitivity is ones for each, so their gradients add up)."""
    if isinstance(out, _C.TensorBase):
        return (out,)
    return tuple(_leaves(who, out, "", [], constants=True))


def _seeds(who, outs, sens):
    if sens is None:
        return tuple(_full_like(o, 1) for o in outs)
    if isinstance(sens, (int, float)) and not isinstance(sens, bool):  # TrainOneStepCell's sens
        return tuple(_full_like(o, sens) for o in outs)
    seeds = tuple(_leaves(who, sens, "", [])) if isinstance(sens, (tuple, list, dict)) else (sens,)
    if len(seeds) != len(outs):
        raise ValueError("%s: %d sensitivities (sens) for %d outputs" % (who, len(seeds), len(outs)))
    out = []
    for k, (s, o) in enumerate(zip(seeds, outs)):
        if not isinstance(s, _C.TensorBase):
            raise TypeError("%s: sens %d must be a Tensor, got %s" % (who, k, type(s).__name__))
        if tuple(s.shape) != tuple(o.shape):
            # MindSpore takes a sens of the output's size in another shape (a (1,) sens for a
            # scalar loss: TrainOneStepCell subclasses fill it from a loss's shape).
            if s.size != o.size:
                raise ValueError("%s: sens %d has shape %s, but output %d has shape %s"
                                 % (who, k, tuple(s.shape), k, tuple(o.shape)))
            s = s.reshape(tuple(o.shape))
        out.append(s)
    return tuple(out)


def _positions(who, args, positions):
    """The argument indices gradients are wanted for: every Tensor argument (_ALL), or those given."""
    if positions == _ALL:
        return [i for i, a in enumerate(args) if isinstance(a, _C.TensorBase)]
    for p in positions:
        if not -len(args) <= p < len(args):
            raise IndexError("%s: grad_position %d is out of range for %d inputs" % (who, p, len(args)))
        if not isinstance(args[p], _C.TensorBase):
            raise TypeError("%s: input %d is a %s; only Tensor inputs have gradients"
                            % (who, p, type(args[p]).__name__))
    return [p % len(args) for p in positions]


def _differentiate(who, fn, args, kwargs, positions, weights, sens, has_aux):
    """(output, [gradient of each position], [gradient of each weight])."""
    positions = _positions(who, args, positions)
    tape = _C.Tape()
    wrt = [args[p] for p in positions] + list(weights)
    leaves = [tape.watch(t) for t in wrt]
    out = _C.tape_run(tape, fn, tuple(args), kwargs)
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) < 2:
            raise ValueError("%s: has_aux=True needs a function that returns more than one output"
                             % who)
        outs = _as_outputs(who, out[0])  # the other outputs are returned as they are
    else:
        outs = _as_outputs(who, out)
    if not outs:  # a constant output (a number, a dtype): every gradient is zero
        grads = [_zeros_like(t) for t in wrt]
    else:
        grads = list(tape.gradient(outs, _seeds(who, outs, sens), leaves, [_zeros_like(t) for t in wrt]))
    if _param.hooks_registered[0]:  # Parameter.register_hook: each hook sees (and may replace) it
        for k, t in enumerate(wrt):
            hooks = getattr(t, "_grad_hooks", None)  # Parameter.register_hook, Tensor.register_hook
            for hook in (list(hooks.values()) if hooks else ()):
                new = hook(grads[k])
                if new is not None:
                    grads[k] = new
    return out, grads[:len(positions)], grads[len(positions):]


def _check_bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("%s: %s must be a bool, got %r" % (who, name, v))
    return v


def _weights_tuple(who, weights):
    """(tuple of Parameters, whether one Parameter was given)."""
    from pijit.parameter import Parameter
    if weights is None:
        return (), False
    if isinstance(weights, Parameter):
        return (weights,), True
    if isinstance(weights, (list, tuple)):
        for i, w in enumerate(weights):
            if not isinstance(w, Parameter):
                raise TypeError("%s: weights[%d] is a %s, not a Parameter" % (who, i, type(w).__name__))
        return tuple(weights), False
    raise TypeError("%s: weights must be a Parameter, a list or tuple of Parameters or a "
                    "ParameterTuple, got %s" % (who, type(weights).__name__))


class GradOperation(object):
    """ops.GradOperation(get_all=False, get_by_list=False, sens_param=False).

    grad_op(fn)(*inputs) is the gradient of fn's output with respect to its first input
    (get_all: a tuple, one per Tensor input); grad_op(fn, weights)(*inputs) with get_by_list=True
    the gradients with respect to the Parameters in `weights` (both: (inputs' grads, weights'
    grads)). The output's sensitivity is ones unless sens_param=True, when the last argument is
    it (a Tensor, or a tuple for a function with several outputs)."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        self.get_all = _check_bool("GradOperation", "get_all", get_all)
        self.get_by_list = _check_bool("GradOperation", "get_by_list", get_by_list)
        self.sens_param = _check_bool("GradOperation", "sens_param", sens_param)

    def __call__(self, fn, weights=None):
        if not callable(fn):
            raise TypeError("GradOperation: expected a function or a Cell, got %s" % type(fn).__name__)
        if self.get_by_list:
            # weights None: no Parameters to differentiate, their gradients are () (as MindSpore)
            ws = () if weights is None else _weights_tuple("GradOperation", weights)[0]
        else:
            ws = ()
        get_all, get_by_list, sens_param = self.get_all, self.get_by_list, self.sens_param

        # A closure, not an object: captured code that makes and calls it is simulated whole.
        def grad_fn(*args, **kwargs):
            sens = None
            if sens_param:
                if not args:
                    raise TypeError("GradOperation(sens_param=True): the last argument must be sens")
                args, sens = args[:-1], args[-1]
            if not get_all and not get_by_list and (not args or not isinstance(args[0], _C.TensorBase)):
                return ()  # no Tensor first input: MindSpore's gradient is the empty tuple
            positions = _ALL if get_all else ([0] if not get_by_list else [])
            _, dx, dw = _differentiate("GradOperation", fn, args, kwargs or None, positions, ws, sens, False)
            if get_all and get_by_list:
                return tuple(dx), tuple(dw)
            if get_by_list:
                return tuple(dw)
            if get_all:
                return tuple(dx)
            return dx[0]
        return grad_fn


def _grad_position(who, grad_position, weights):
    if grad_position is None:
        if weights is None:
            raise ValueError("%s: grad_position and weights cannot both be None" % who)
        return None
    if _is_int(grad_position):
        return grad_position
    if isinstance(grad_position, tuple) and all(isinstance(p, int) for p in grad_position):
        gp = tuple(int(p) for p in grad_position)  # (MindSpore takes a bool as its int)
        if len(set(gp)) != len(gp):
            raise ValueError("%s: there are duplicate positions in grad_position %r" % (who, gp))
        return gp
    raise TypeError("%s: grad_position must be None, an int or a non-empty tuple of ints, got %r"
                    % (who, grad_position))


def _with_ids(ids, grads):
    return tuple((i, g) for i, g in zip(ids, grads))


def _grad_fn(who, fn, grad_position, weights, has_aux, with_value, return_ids):
    if not callable(fn):
        raise TypeError("%s: expected a function or a Cell, got %s" % (who, type(fn).__name__))
    _check_bool(who, "has_aux", has_aux)
    _check_bool(who, "return_ids", return_ids)
    gp = _grad_position(who, grad_position, weights)
    ws, one_weight = _weights_tuple(who, weights)
    positions = [] if gp is None else ([gp] if _is_int(gp) else list(gp))

    # A closure, not an object: captured code that makes and calls it is simulated whole.
    def grad_fn(*args, **kwargs):
        if gp == ():
            # (MindSpore raises this RuntimeError when the gradient function is called)
            raise RuntimeError("%s: grad_position should not be empty when grad by position; "
                               "pass grad_position=None for the weights' gradients only" % who)
        if _is_int(gp) and -len(args) <= gp < len(args) and not isinstance(args[gp], _C.TensorBase) and not ws:
            # the gradient with respect to a number: MindSpore returns the empty tuple
            return (fn(*args, **kwargs), ()) if with_value else ()
        out, dx, dw = _differentiate(who, fn, args, kwargs or None, positions, ws, None, has_aux)
        if return_ids:  # each gradient as (input position, gradient) or (parameter name, gradient)
            dx = _with_ids([p % len(args) for p in positions], dx)
            dw = _with_ids([w.name for w in ws], dw)
        gx = dx[0] if _is_int(gp) else tuple(dx)
        gw = dw[0] if one_weight else tuple(dw)
        grads = gw if gp is None else (gx if not ws else (gx, gw))
        if with_value:
            return out, grads
        if has_aux:
            return grads, tuple(out[1:])
        return grads
    return grad_fn


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """ops.grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False): a function
    returning the gradient of fn's output with respect to input `grad_position` (an int: one
    Tensor; a tuple: a tuple), to `weights` (grad_position=None), or both as (inputs' grads,
    weights' grads). Every Tensor of a tuple, list or dict output is differentiated (their
    gradients add up). With has_aux, only the first output is differentiated and (gradient,
    (other outputs...)) returned. With return_ids, each gradient is (its input's position, it) or
    (its Parameter's name, it) in the same structure (pijit.get_grad finds one)."""
    return _grad_fn("grad", fn, grad_position, weights, has_aux, False, return_ids)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """ops.value_and_grad: like grad, returning (fn's whole output, gradient)."""
    return _grad_fn("value_and_grad", fn, grad_position, weights, has_aux, True, return_ids)


def get_grad(gradients, identifier):
    """mindspore.get_grad: the gradient paired with `identifier` (an input position, or a
    Parameter: by its name) in what grad(..., return_ids=True) returned."""
    from pijit.parameter import Parameter
    if isinstance(identifier, Parameter):
        key = identifier.name
    elif _is_int(identifier):
        key = identifier
    else:
        raise TypeError("get_grad: identifier must be an int position or a Parameter, got %s"
                        % type(identifier).__name__)

    def find(g):
        if isinstance(g, tuple):
            if len(g) == 2 and isinstance(g[1], _C.TensorBase) and not isinstance(g[0], (tuple, _C.TensorBase)):
                return g[1] if (g[0] == key and type(g[0]) is type(key)) else None
            for item in g:
                r = find(item)
                if r is not None:
                    return r
        return None
    found = find(gradients) if isinstance(gradients, tuple) else None
    if found is None:
        raise RuntimeError("get_grad: no gradient for %r in the gradients given (were they "
                           "returned with return_ids=True?)" % (key,))
    return found


def stop_gradient(value):
    """ops.stop_gradient(x): x's values, through which no gradient flows (tuples and lists
    element by element)."""
    if isinstance(value, (tuple, list)):
        return type(value)(stop_gradient(v) for v in value)
    if not isinstance(value, _C.TensorBase):
        return value
    return _C.op("stop_gradient", (value,))


def call_cell(cell, args, kwargs):
    """A Cell call while a tape records: a Cell with bprop is differentiated by it."""
    from pijit.nn.cell import construct_of
    bprop = getattr(type(cell), "bprop", None)
    if bprop is None or not _C.tape_active():
        return construct_of(cell)(*args, **kwargs)
    if kwargs:
        raise TypeError("%s: a Cell with bprop takes positional inputs only" % type(cell).__name__)
    return _C.call_with_bprop(construct_of(cell), cell.bprop, tuple(args), type(cell).__name__)


__all__ = ["GradOperation", "grad", "value_and_grad", "get_grad", "stop_gradient"]
