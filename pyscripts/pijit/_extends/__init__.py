"""MindSpore's mindspore._extends: parse.compile_config, and cell_attr_register (programs with
custom Cells import it from here)."""
import functools


def cell_attr_register(fn=None, attrs=None):
    """Decorates a Cell's __init__: after it runs, the cell's init arguments are recorded as the
    string self.cell_init_args ("ClassName" followed by the arguments, or only those named in
    attrs), which MindSpore uses to tell apart Cells of one class built alike. Usable bare or as
    cell_attr_register(attrs=[...]); the cell otherwise behaves as undecorated."""
    if attrs is not None and not isinstance(attrs, (list, tuple)):
        raise TypeError("cell_attr_register: attrs must be a list or tuple of str, got %s"
                        % type(attrs).__name__)

    def wrap(init):
        @functools.wraps(init)
        def deco(self, *args, **kwargs):
            init(self, *args, **kwargs)
            if attrs is None:
                text = ", ".join([repr(a) for a in args] + ["%s=%r" % kv for kv in sorted(kwargs.items())])
            else:
                text = ", ".join("%s=%r" % (a, getattr(self, a)) for a in attrs)
            object.__setattr__(self, "cell_init_args", type(self).__name__ + "(" + text + ")")
        return deco
    return wrap(fn) if fn is not None else wrap
