"""pijit.jit / ms_function: capture a function, method or Cell into guarded graphs.

    @pj.jit                      # or @pj.jit(fullgraph=True), pj.ms_function, pj.jit(net)
    def f(x, y):
        return ops.relu(x @ y) * 2

On the first call the frame's bytecode is simulated (capture/), the tensor work becomes a graph,
guards record what it assumed, and a rewritten code object calls the graph; later calls check the
guards and run the cached code. What capture cannot prove safe runs eagerly, with the reason in
jit_stats(f)["break_reasons"] (as text) and jit_stats(f)["break_records"] (as fields: id, name,
message, detail, file, line, function, frames, kind); fullgraph=True (and Cells under GRAPH_MODE)
raise CaptureError instead, whose e.code, e.reason_id and e.record say which code and why.
PIJIT_LOGS=breaks,recompiles,graphs prints decisions to stderr as they happen.
"""
import functools
import atexit
import os

from pijit import _C
from pijit._state import runtime_state
from pijit._validate import check_bool, check_str, type_error
from pijit.signature import compile_signature

CaptureError = _C.CaptureError
set_jit_config = _C.set_jit_config
stress_stats = _C.stress_stats
reset_stress_stats = _C.reset_stress_stats

_C._set_library_dir(os.path.dirname(os.path.abspath(__file__)) + os.sep)
# Before modules are torn down, code objects give back pijit's state (and the extra arrays only
# pijit used), so that finalization frees them as if pijit had never seen them.
atexit.register(_C._release_code_states)
if any(c.strip() in ("perf", "all") for c in os.environ.get("PIJIT_LOGS", "").split(",")):
    from pijit.explain import enable_perf  # registered after release: runs first at exit
    enable_perf()


_CAPTURE_MODES = ("ast", "bytecode", "trace")
_JIT_LEVELS = ("O0", "O1", "O2")
_BACKENDS = ("", "ms_backend", "GE")  # MindSpore's; recorded, they change nothing in pijit
# MindSpore's JitConfig options jit() takes as keywords, with their values (recorded only).
_OPTIONS = {"exc_mode": ("auto", "sink", "no_sink"), "infer_boost": ("on", "off"),
            "debug_level": ("RELEASE", "DEBUG"), "jit_syntax_level": ("", "STRICT", "COMPATIBLE", "LAX")}


def jit(function=None, mode="PIJit", input_signature=None, hash_args=None, jit_config=None,
        compile_once=False, *, capture_mode="bytecode", jit_level="O0", dynamic=None,
        fullgraph=False, backend="", fn=None, recompile_limit=None, inline_depth=None,
        verify=None, **options):
    """jit(function) -> a jitted callable; also a decorator, with or without arguments.

    function is a function, a bound method or a Cell (its construct is captured), or a Cell's
    construct being decorated. Both of MindSpore's signatures are accepted:
    jit(fn=None, mode="PSJit", input_signature=None, hash_args=None, jit_config=None,
    compile_once=False) and jit(function=None, *, capture_mode="ast", jit_level="O0", dynamic=0,
    fullgraph=False, backend="", **options). pijit always captures bytecode (capture_mode and mode
    choose among MindSpore's front ends and change nothing here), and guards decide when to
    recompile, so hash_args, jit_level and backend are checked and recorded but do not change the
    result. input_signature (a placeholder Tensor(shape=[None, 4], dtype=...) or a tuple of them;
    a Cell's set_inputs() gives one too) makes its None and Symbol sizes dynamic from the first
    call, and each call is checked against it (TypeError, ValueError). dynamic: None (the default) makes a tensor size that changed
    between calls symbolic on the recompile, so later sizes reuse the graph; 1 makes every size of
    the frame's tensors (not Parameters) symbolic from the first call; 0 keeps every size exact.
    Sizes 0 and 1 always stay exact. fullgraph=True raises CaptureError where capture would fall
    back. pijit's own: recompile_limit, inline_depth, and verify=N (every Nth call also runs as
    plain Python from the same state and is compared; a difference raises pijit.VerifyError;
    None reads PIJIT_VERIFY, 0 is off; pijit/_verify.py)."""
    if fn is not None:
        if function is not None:
            raise TypeError("jit() got both 'function' and 'fn'")
        function = fn
    if mode not in ("PIJit", "PSJit"):
        raise ValueError("jit: mode must be 'PIJit' or 'PSJit', got %r" % (mode,))
    if capture_mode not in _CAPTURE_MODES:
        raise ValueError("jit: capture_mode must be one of %s, got %r" % (_CAPTURE_MODES, capture_mode))
    if jit_level not in _JIT_LEVELS:
        raise ValueError("jit: jit_level must be one of %s, got %r" % (_JIT_LEVELS, jit_level))
    if dynamic is not None and (isinstance(dynamic, bool) or dynamic not in (0, 1)):
        raise ValueError("jit: dynamic must be None (automatic), 0 or 1, got %r" % (dynamic,))
    check_str("jit", "backend", backend, _BACKENDS)
    if jit_config is not None and not isinstance(jit_config, dict) and not hasattr(jit_config, "jit_config_dict"):
        raise type_error("jit", "jit_config", jit_config, "JitConfig, dict or None")
    check_bool("jit", "compile_once", compile_once)
    check_bool("jit", "fullgraph", fullgraph)
    verify = _verify_every(verify)
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError("jit() got unexpected keyword argument(s) %s" % ", ".join(map(repr, unknown)))
    for key, value in options.items():
        check_str("jit", key, value, _OPTIONS[key])

    def wrap(f):
        if not callable(f):
            raise TypeError("jit expects a function, a method or a Cell, got %s"
                            % type(f).__name__)
        sig = input_signature
        if sig is None:  # a Cell's set_inputs()
            sig = getattr(f, "__dict__", {}).get("_input_signature")
        check_args, sig_dims = (None, None)
        if sig is not None:
            check_args, sig_dims = compile_signature(f, sig, "jit(%s)" % getattr(f, "__name__", type(f).__name__))
        j = _C.JitFunction(f, fullgraph=bool(fullgraph), recompile_limit=recompile_limit,
                           inline_depth=inline_depth, dynamic=dynamic, check_args=check_args,
                           signature_dims=sig_dims, verify=verify)
        if not hasattr(f, "construct"):
            try:
                functools.update_wrapper(j, f)
            except (AttributeError, TypeError):
                pass
        return j

    return wrap if function is None else wrap(function)


def _verify_every(verify):
    """jit(verify=): an int >= 0; None reads PIJIT_VERIFY (unset or empty: 0, off)."""
    if verify is None:
        env = os.environ.get("PIJIT_VERIFY", "").strip()
        if not env:
            return 0
        try:
            verify = int(env)
        except ValueError:
            raise ValueError("PIJIT_VERIFY must be a number of calls (every Nth call is verified; 0: off), got %r"
                             % env) from None
        if verify < 0:
            raise ValueError("PIJIT_VERIFY must be >= 0, got %r" % env)
        return verify
    if isinstance(verify, bool) or not isinstance(verify, int):
        raise type_error("jit", "verify", verify, "int or None")
    if verify < 0:
        raise ValueError("For 'jit', the 'verify' should be >= 0 (every Nth call is verified; 0: off), but got %r."
                         % (verify,))
    return verify


class JitConfig(object):
    """MindSpore's JitConfig(jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
    infer_boost="off", **kwargs): compile options for jit(jit_config=...) and Cell.set_jit_config.
    Validated as MindSpore validates them; pijit records them (they select Ascend/GE passes in
    MindSpore and change nothing in pijit's CPU compiler)."""

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
                 infer_boost="off", **kwargs):
        check_str("JitConfig", "jit_level", jit_level, ("",) + _JIT_LEVELS)
        values = {"exc_mode": exc_mode, "jit_syntax_level": jit_syntax_level,
                  "debug_level": debug_level, "infer_boost": infer_boost}
        for key, value in values.items():
            check_str("JitConfig", key, value, _OPTIONS[key])
        self.jit_config_dict = dict(kwargs, jit_level=jit_level, **values)

    def __repr__(self):
        return "JitConfig(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.jit_config_dict.items()))


def ms_function(fn=None, input_signature=None, hash_args=None, jit_config=None):
    """MindSpore 1.x name of jit: ms_function(fn=None, input_signature=None, hash_args=None,
    jit_config=None)."""
    return jit(fn, input_signature=input_signature, hash_args=hash_args, jit_config=jit_config)


@runtime_state("reads capture statistics")
def jit_stats(fn):
    """Counters, guards (as text) and graphs of a jitted function, method or Cell:
    compiles, graphs, cache_hits, cache_misses, recompiles, frames_rewritten (of which
    frames_direct: a direct call ran the graph without the rewritten code), frames_default,
    recompile_reasons ("x.shape[0]: 3 -> 4"), break_reasons (as text), break_records (each as a dict:
    id, name, message, detail, file, line, function, chain, kind, text; read these, not the text),
    entries (guards, graph, ops, hits, compiled, plan, memo_reuses)."""
    return _C.jit_stats(fn)


@runtime_state("switches stress mode")
def set_stress(on=True):
    """Stress mode: every frame outside pijit becomes a capture candidate (on=True or 1); with 2,
    frames capture refuses also run pijit's re-assembled bytecode (exercising the assembler, at
    the price of a copied f_code); with 3, a refusal also becomes a graph break where it can, even
    with no graph work before it (exercising breaks and resume functions on any code).
    stress_stats() counts frames and why."""
    if isinstance(on, bool) or on in (0, 1, 2, 3):
        _C.set_stress(int(on))
    else:
        raise ValueError("set_stress: expected a bool or a level 0, 1, 2, 3, got %r" % (on,))


class set_stance(object):
    """How jitted code runs from now on, switchable at run time; the caches are kept, so going
    back to "default" finds every captured entry again:

    - "default": capture, guard checks, recompiles as usual;
    - "force_eager": every call runs eagerly (no capture, no guard check);
    - "eager_on_recompile": an entry whose guards pass still runs; a call that would recompile
      runs eagerly instead (a first capture still compiles);
    - "fail_on_recompile": a call that would recompile raises RuntimeError naming the guard
      that failed (a first capture still compiles);
    - "eager_then_compile": each function's first call runs eagerly, later ones capture.

    A plain call sets it; as a context manager the stance before it comes back on exit; as a
    decorator (@pijit.set_stance("force_eager")) it holds only while the function runs.
    jit_stats(fn)["stance_calls"] counts the calls each stance decided."""
    __pijit_state__ = "switches the compile stance"

    def __init__(self, stance="default"):
        self._stance = stance
        self._before = _C.set_stance(stance)  # raises for an unknown name, changing nothing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_stance(self._before)
        return False

    def __call__(self, fn):
        if not callable(fn):
            raise type_error("set_stance", "fn", fn, "a callable")
        _C.set_stance(self._before)  # a decorator changes nothing until its function runs
        stance = self._stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            before = _C.set_stance(stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _C.set_stance(before)
        return with_stance


def get_stance():
    """The current stance's name (set_stance)."""
    return _C.get_stance()


if os.environ.get("PIJIT_STRESS", "") not in ("", "0"):
    set_stress(int(os.environ["PIJIT_STRESS"]) if os.environ["PIJIT_STRESS"] in ("2", "3") else 1)


def jit_class(cls):
    """MindSpore's jit_class (formerly ms_class): marks a user class whose instances jitted code
    may create and use. pijit simulates user classes by their Python meaning, so the mark changes
    nothing at run time; a Cell or a non-class is refused as MindSpore refuses it."""
    from pijit.nn.cell import Cell
    if not isinstance(cls, type):
        raise TypeError("Decorator jit_class can only be used for class type, but got %r." % (cls,))
    if issubclass(cls, Cell):
        raise TypeError("Decorator jit_class is used for user-defined classes and cannot be used "
                        "for nn.Cell: %s<>." % cls.__name__)
    cls.__ms_class__ = True
    return cls


ms_class = jit_class


def lazy_inline(fn=None, attrs=None, policy=None):
    """MindSpore's lazy_inline, for a Cell's __init__: instances built from the same arguments
    reuse one compiled structure. pijit already shares the graphs of every instance of a Cell
    class with the same structure (guards check type and shapes, not identity), so the decorator
    records the arguments (`cell_init_args`) and otherwise calls __init__ unchanged."""
    if attrs is not None and not isinstance(attrs, (str, list, tuple)):
        raise TypeError("lazy_inline: attrs must be a str, list or tuple, got %s"
                        % type(attrs).__name__)

    def wrap(init):
        if not callable(init):
            raise TypeError("lazy_inline decorates a Cell's __init__, got %r" % (init,))

        @functools.wraps(init)
        def lazy_init(self, *args, **kwargs):
            init(self, *args, **kwargs)
            object.__setattr__(self, "cell_init_args", "lazy_inline_" + type(self).__name__
                               + repr((args, sorted(kwargs.items()))))
        return lazy_init

    return wrap if fn is None else wrap(fn)
