"""nn.GraphCell: a graph loaded from a MindIR file (mindspore.load) run as a Cell."""
from pijit.nn.cell import Cell

__all__ = ["GraphCell"]


class GraphCell(Cell):
    """Runs `graph` (what mindspore.load returns) on its inputs. params_init: {name: Tensor or
    Parameter} replacing weights of the file (a name the graph lacks is a ValueError)."""

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__()
        from pijit.export import FuncGraph
        from pijit.parameter import Parameter
        if not isinstance(graph, FuncGraph):
            raise TypeError("For 'GraphCell', the argument 'graph' must be a FuncGraph loaded from "
                            "a MindIR file, but got %s." % type(graph).__name__)
        if obf_random_seed is not None:
            raise NotImplementedError("GraphCell: obfuscated models (obf_random_seed) are not "
                                      "supported by pijit")
        params = dict(graph.parameters)
        for name, value in (params_init or {}).items():
            if name not in params:
                raise ValueError("For 'GraphCell', the parameter %r in 'params_init' is not a "
                                 "parameter of the graph." % (name,))
            if tuple(value.shape) != tuple(params[name].shape) or value.dtype != params[name].dtype:
                raise ValueError("For 'GraphCell', the parameter %r in 'params_init' has shape %s "
                                 "and dtype %s, but the graph's has shape %s and dtype %s."
                                 % (name, tuple(value.shape), value.dtype,
                                    tuple(params[name].shape), params[name].dtype))
            params[name] = value
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_weights", tuple(
            p if isinstance(p, Parameter) else Parameter(p, name=n, requires_grad=False)
            for n, p in params.items()))
        object.__setattr__(self, "_fn", graph.function)

    def construct(self, *inputs):
        want = self._graph.inputs
        if len(inputs) != len(want):
            raise ValueError("For 'GraphCell', the graph takes %d input(s), but got %d."
                             % (len(want), len(inputs)))
        for i, (x, (name, dtype, shape)) in enumerate(zip(inputs, want)):
            if shape is not None and tuple(x.shape) != tuple(shape):
                raise ValueError("For 'GraphCell', input %d (%s) must have shape %s as exported, "
                                 "but got %s." % (i, name, tuple(shape), tuple(x.shape)))
            if dtype is not None and str(x.dtype) != dtype:
                raise TypeError("For 'GraphCell', input %d (%s) must be a %s tensor as exported, "
                                "but got %s." % (i, name, dtype, x.dtype))
        out = self._fn(*(self._weights + tuple(inputs)))
        return out[0] if len(out) == 1 else out
