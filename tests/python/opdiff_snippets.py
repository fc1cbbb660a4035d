"""Snippets for test_opcode_diff.py: small functions, each using pijit tensors alongside one opcode
(or one family), run plainly and through pj.jit and compared. Each is registered with

    @snippet(ops, calls, expect, globals_=..., compiles=..., drive=..., factory=..., name=...)

  ops       opcode names the snippet is for; each one the running interpreter's opcode table has
            must occur in the snippet's bytecode (its own code or the code objects nested in it),
            so a snippet that stops compiling to its opcode fails instead of rotting. "A|B": the
            first of A, B that the table has (IS_OP|COMPARE_OP: IS_OP on 3.9, COMPARE_OP on 3.7).
  calls     one function per call: calls[i](ctx) -> the call's arguments (a tuple, or Kw(args,
            kwargs)). ctx is a dict that lives through one run of the sequence: a call may change
            what an earlier call was given (grow a list, change a global) before returning args.
  expect    what capture must do with the jitted snippet, as a set of outcomes: "captured" (some
            call ran a graph-calling rewritten code), a break reason id ("B005": capture refused
            with that reason), or "never" (the frame is never a capture candidate: a generator,
            coroutine or module-level code). The observed set must be exactly this set.
  globals_  module globals the snippet reads or writes: name -> factory (or ABSENT), reset before
            each run and compared after every call.
  compiles  if given, the number of captures the jitted run must do (guards: recompiles).
  drive     "gen" / "coro": the call returns a generator / coroutine, run to the end here.
  factory   makes a fresh function for each run (a closure over state a run changes).

Expectations that differ between Pythons are chosen by opcode presence (by_op), never by version.

Every snippet lives in this module so that its globals are this module's namespace."""
import types

import pijit as pj

OPCODES = frozenset(n for n, _, _ in pj._C._opcode_table())

T = pj.Tensor
SNIPPETS = []
ABSENT = object()  # a global that must not exist before a run
GENERATED_FILE = "<opdiff-generated>"


class Kw(object):
    """A call's positional and keyword arguments."""

    def __init__(self, args, kwargs):
        self.args = args
        self.kwargs = kwargs


class Snippet(object):
    def __init__(self, fn, ops, calls, expect, globals_, compiles, drive, name, factory):
        self.fn = fn
        self.factory = factory  # makes a fresh fn for each run (closures over state)
        self.ops = tuple(ops)
        self.calls = list(calls)
        self.expect = frozenset(expect)
        self.globals_ = dict(globals_ or {})
        self.compiles = compiles
        self.drive = drive
        self.name = name or fn.__name__

    def make(self):
        return self.factory() if self.factory else self.fn


def snippet(ops, calls, expect, globals_=None, compiles=None, drive=None, name=None, factory=None):
    if isinstance(ops, str):
        ops = (ops,)
    if isinstance(expect, str):
        expect = (expect,)

    def reg(fn):
        SNIPPETS.append(Snippet(fn, ops, calls, expect, globals_, compiles, drive, name, factory))
        return fn
    return reg


def register(fn, ops, calls, expect, **kw):
    """For functions made at import time (generated source, module-level code objects, closures
    from a factory: register(factory(), ..., factory=factory, name=...))."""
    snippet(ops, calls, expect, **kw)(fn)


# ---- arguments -------------------------------------------------------------------------------

def v3(c):
    return (T([1.0, -2.0, 3.5]),)


def v3b(c):
    return (T([0.25, 4.0, -1.0]),)


def m22(c):
    return (T([[1.0, 2.0], [-3.0, 0.5]]),)


def i3(c):
    return (T([3, -4, 7]),)


def b3(c):
    return (T([True, False, True]),)


def args(*fs):
    """Concatenates the arguments of several argument makers."""
    def make(c):
        out = ()
        for f in fs:
            out += f(c) if callable(f) else (f,)
        return out
    return make


def by_op(opname, if_present, if_absent):
    """An expectation that depends on whether the running interpreter has opcode `opname`
    (versions differ by their opcodes; nothing here tests the version number)."""
    return if_present if opname in OPCODES else if_absent


def const(*values):
    """Fixed extra arguments (rebuilt each call)."""
    return lambda c: tuple(values)


TENSOR_CALLS = [v3, v3b, m22]   # same shape twice (a cache hit), then a new shape (a recompile)


# ---- helpers the snippets call --------------------------------------------------------------

def add_scaled(a, b=1.0, *, scale=1.0):
    return (a + b) * scale


def two(a, b):
    return a - b


def star_all(*a, **k):
    return len(a), sorted(k)


class Box(object):
    def __init__(self, v):
        self.v = v


class Slotted(object):
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


LOG = []


class Ctx(object):
    """A context manager that logs to the global LOG and may swallow the exception."""

    def __init__(self, swallow=False):
        self.swallow = swallow

    def __enter__(self):
        LOG.append("enter")
        return 2.0

    def __exit__(self, t, v, tb):
        LOG.append(("exit", t.__name__ if t else None))
        return self.swallow


def gen_values(x, n):
    for i in range(n):
        yield x * i


class AIter(object):
    """An async iterable over the given values."""

    def __init__(self, values):
        self.values = list(values)

    def __aiter__(self):
        return self

    async def __anext__(self):
        if not self.values:
            raise StopAsyncIteration
        return self.values.pop(0)


class ACtx(object):
    async def __aenter__(self):
        LOG.append("aenter")
        return 3.0

    async def __aexit__(self, t, v, tb):
        LOG.append(("aexit", t.__name__ if t else None))
        return False


class Awaitable(object):
    def __init__(self, v):
        self.v = v

    def __await__(self):
        yield "suspend"
        return self.v


def run_coro(coro):
    """Drives a coroutine that suspends only on Awaitable: sends None until it returns."""
    steps = []
    while True:
        try:
            steps.append(coro.send(None))
        except StopIteration as e:
            return steps, e.value


def with_bytes(fn, replace):
    """A copy of fn whose bytecode has `replace(list of (op, arg)) -> list of (op, arg)` applied
    (same length: no jump moves)."""
    co = fn.__code__
    raw = co.co_code
    pairs = [(raw[i], raw[i + 1]) for i in range(0, len(raw), 2)]
    new = replace(pairs)
    assert len(new) == len(pairs)
    code = bytes(b for p in new for b in p)
    if hasattr(co, "replace"):
        nco = co.replace(co_code=code)
    else:
        nco = types.CodeType(co.co_argcount, co.co_kwonlyargcount, co.co_nlocals, co.co_stacksize,
                             co.co_flags, code, co.co_consts, co.co_names, co.co_varnames,
                             co.co_filename, co.co_name, co.co_firstlineno, co.co_lnotab,
                             co.co_freevars, co.co_cellvars)
    f = types.FunctionType(nco, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    f.__qualname__ = fn.__qualname__
    return f


def _opnum(name):
    for n, num, _ in pj._C._opcode_table():
        if n == name:
            return num
    raise KeyError(name)


def generated(src, name, filename=GENERATED_FILE):
    """A function compiled from generated source, with this module's globals."""
    code = compile(src, filename, "exec")
    ns = {}
    exec(code, globals(), ns)
    fn = ns[name]
    return fn


EXCEPT_STAR_SRC = """
def except_star_splits_a_group(x, group):
    y = x * 2
    try:
        raise group
    except* ValueError:
        y = y + 1
    except* KeyError:
        y = y - 1
    return y
"""


def module_code_function(src, name):
    """Module-level code (LOAD_NAME/STORE_NAME, IMPORT_STAR, PRINT_EXPR in 'single' mode) as a
    function: its frame's locals are this module's globals."""
    mode = "single" if name.endswith("_single") else "exec"
    fn = types.FunctionType(compile(src, GENERATED_FILE, mode), globals(), name)
    fn.__qualname__ = name
    return fn


# =============================================================================================
# Stack manipulation: POP_TOP, ROT_*, DUP_TOP*, NOP
# =============================================================================================

@snippet("POP_TOP", TENSOR_CALLS, "captured", compiles=2)
def pop_top_expression_statement(x):
    x * 2
    add_scaled(x)
    return x + 1


@snippet("ROT_TWO", [args(v3, v3b), args(v3b, v3), args(m22, m22)], "captured", compiles=2)
def rot_two_swap(a, b):
    a, b = b, a
    return a - b, b


@snippet(("ROT_THREE", "ROT_TWO"), [args(v3, v3b, v3), args(v3b, v3, v3b)], "captured")
def rot_three_rotate(a, b, c):
    a, b, c = c, a, b
    return a * 1.0, b * 2.0, c * 3.0


@snippet(("DUP_TOP",), [args(v3, const(1, 2)), args(v3, const(5, 2)), args(v3, const(0, 9))],
         "captured", compiles=3)
def dup_top_chained_compare_and_multi_assign(x, a, b):
    y = z = x * 2
    if 0 < a < b:
        return y + z
    return y - z


@snippet(("DUP_TOP_TWO", "ROT_THREE", "STORE_SUBSCR"), TENSOR_CALLS, "captured", compiles=2)
def dup_top_two_augmented_int_item(x):
    counts = [1, 2]
    counts[1] += 5
    counts[0] *= 3
    return x * counts[0] + counts[1]


# (`items[0] -= 1.0` is MindSpore's `items[0] = items[0] - 1.0`: a plain op, no write to x)
@snippet(("DUP_TOP_TWO", "ROT_THREE", "STORE_SUBSCR"), TENSOR_CALLS, "captured", compiles=2)
def dup_top_two_augmented_tensor_item(x):
    items = [x, x * 2]
    items[1] += x
    items[0] -= 1.0
    return items


@snippet(("DUP_TOP_TWO", "BUILD_SLICE"), TENSOR_CALLS, "captured", compiles=2)
def dup_top_two_augmented_slice(x):
    items = [x, x * 2, x * 3]
    items[0:2] += [x - 1]
    return items


def _nop_source(x):
    x
    x
    return x * 3


def _nop_replace(pairs):
    # The first LOAD_FAST x / POP_TOP pair (an expression statement) becomes NOP NOP (after 3.11's
    # RESUME).
    load, pop, nop = _opnum("LOAD_FAST"), _opnum("POP_TOP"), _opnum("NOP")
    at = next(i for i in range(len(pairs) - 1) if pairs[i][0] == load and pairs[i + 1][0] == pop)
    assert all(p[0] == _opnum("RESUME") for p in pairs[:at]), pairs
    return pairs[:at] + [(nop, 0), (nop, 0)] + pairs[at + 2:]


nop_instruction = with_bytes(_nop_source, _nop_replace)
nop_instruction.__name__ = nop_instruction.__qualname__ = "nop_instruction"
register(nop_instruction, "NOP", TENSOR_CALLS, "captured", compiles=2)


# =============================================================================================
# Unary and binary operators (and their error paths)
# =============================================================================================

@snippet(("UNARY_POSITIVE", "UNARY_NEGATIVE"), TENSOR_CALLS, "captured", compiles=2)
def unary_pos_neg(x):
    return +x, -x, -(-x * 2)


@snippet("UNARY_INVERT", [b3, b3, lambda c: (T([[False, True]]),)], "captured", compiles=2)
def unary_invert_bool_tensor(b):
    return ~b, ~(~b)


@snippet("UNARY_INVERT", [i3, i3], "captured")
def unary_invert_int_tensor(x):
    return ~x, ~(x > 0)


@snippet("UNARY_INVERT", [v3, v3], "B007")
def unary_invert_float_tensor_error(x):
    return ~x


@snippet("UNARY_INVERT", [args(v3, const(5)), args(v3, const(-1))], "captured", compiles=2)
def unary_invert_python_int(x, n):
    return x * ~n


@snippet("UNARY_NOT", [args(v3, const(0)), args(v3, const(3)), args(v3, const(None)),
                       args(v3, const([]))], "captured", compiles=4)
def unary_not_constant(x, flag):
    if not flag:
        return x * 0
    return not flag, x


@snippet("UNARY_NOT", [v3, v3], "B007")
def unary_not_tensor_ambiguous(x):
    return not x


@snippet("UNARY_NOT", [lambda c: (T([2.0]),), lambda c: (T([0.0]),)], "B003")
def unary_not_one_element_tensor(x):
    y = not x
    return y, x + 1


@snippet(("BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE"),
         [args(v3, v3b), args(v3b, v3), args(m22, m22)], "captured", compiles=2)
def binary_arith_tensors(a, b):
    return a + b, a - b, a * b, a / (b * b + 1), 2.0 + a, 1.0 - b, 3 * a, 1 / (a * a + 1)


@snippet(("BINARY_FLOOR_DIVIDE", "BINARY_MODULO", "BINARY_POWER"), TENSOR_CALLS, "captured",
         compiles=2)
def binary_floordiv_mod_pow(x):
    return x // 2, x % 1.5, x ** 2, 2 ** x, x ** 3


@snippet("BINARY_MATRIX_MULTIPLY", [m22, m22, lambda c: (T([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]]),)],
         ("captured", "B007"), compiles=2)
def binary_matmul_then_shape_error(m):
    r = m @ T([[1.0, 2.0], [3.0, 4.0]])
    return r


@snippet("BINARY_MATRIX_MULTIPLY", [m22, m22], "captured")
def binary_matmul(m):
    return m @ m, m @ T([1.0, -1.0])


@snippet(("BINARY_AND", "BINARY_OR", "BINARY_XOR"), [args(b3, b3), args(b3, lambda c: (T([False, False, True]),))],
         "captured")
def binary_bool_logic(a, b):
    return a & b, a | b, a ^ b, (a ^ b) | (a & b)


@snippet(("BINARY_AND", "BINARY_OR", "BINARY_XOR", "BINARY_LSHIFT", "BINARY_RSHIFT"),
         [args(v3, const(6, 3)), args(v3, const(6, 3)), args(v3, const(12, 5))], "captured", compiles=2)
def binary_int_bit_ops(x, a, b):
    return x * (a & b), x * (a | b), x * (a ^ b), x * (a << b), x * (a >> 1)


@snippet(("BINARY_LSHIFT", "BINARY_RSHIFT", "BINARY_AND", "BINARY_OR", "BINARY_XOR", "UNARY_INVERT"),
         [i3, i3], "captured")
def binary_int_tensor_bit_ops(x):
    return x << 1, x >> 1, x & 6, 5 | x, x ^ x, ~x, 1 << x


@snippet(("BINARY_LSHIFT", "BINARY_AND"), [v3, v3], "B007")
def binary_bit_ops_on_floats_raise(x):
    return x << 1, x & x


@snippet("BINARY_RSHIFT", [args(v3, const(1, -1))], "B007")
def binary_rshift_negative_count(x, a, b):
    return x * (a >> b)


@snippet("BINARY_ADD", [args(v3, lambda c: (T([1.0, 2.0]),)), args(v3, v3)], ("B007", "captured"),
         compiles=2)
def binary_add_broadcast_error(a, b):
    return a + b


@snippet("BINARY_ADD", [args(v3, const("s")), args(v3, const("s"))], "B007")
def binary_add_type_error(a, s):
    return a + s


@snippet("BINARY_TRUE_DIVIDE", [args(v3, const(0)), args(v3, const(2))], ("B007", "captured"),
         compiles=2)
def binary_true_divide_python_zero(x, n):
    return x * (1 / n)


@snippet("BINARY_MODULO", [args(v3, const("%d-%s", (1, "a")))], "captured")
def binary_modulo_string_format(x, fmt, tup):
    return fmt % tup, x


@snippet("BINARY_MODULO", [args(v3, const("%d", "a"))], "B007")
def binary_modulo_string_format_error(x, fmt, v):
    return fmt % v, x


@snippet(("INPLACE_ADD", "INPLACE_SUBTRACT", "INPLACE_MULTIPLY", "INPLACE_TRUE_DIVIDE"),
         TENSOR_CALLS, "captured", compiles=2)
def inplace_arith_on_new_tensor(x):  # a tensor the graph made, updated in place: one graph
    y = x * 1.0
    y += 1.0
    y -= x
    y *= 3.0
    y /= 2.0
    return y, x


# (MindSpore's meaning: each is the plain operator, so `**=` no longer breaks)
@snippet(("INPLACE_FLOOR_DIVIDE", "INPLACE_MODULO", "INPLACE_POWER", "INPLACE_MATRIX_MULTIPLY"),
         [m22, m22], "captured")
def inplace_floordiv_mod_pow_matmul_on_new_tensor(m):
    y = m + 0.0
    y //= 2.0
    z = m + 0.0
    z %= 1.5
    w = m + 0.0
    w **= 2
    w @= m
    return y, z, w


# MindSpore's `x += 1.0` is `x = x + 1.0`: the caller's tensor is not written, alias keeps it (the
# in-place meaning under JIT_ENABLE_AUGASSIGN_INPLACE, a B004 break here: test_tensor_iadd.py)
@snippet("INPLACE_ADD", TENSOR_CALLS, "captured", compiles=2)
def inplace_add_on_argument_tensor(x):
    alias = x
    x += 1.0
    return x, alias


@snippet(("INPLACE_AND", "INPLACE_OR", "INPLACE_XOR", "INPLACE_LSHIFT", "INPLACE_RSHIFT"),
         [args(v3, const(12)), args(v3, const(12)), args(v3, const(7))], "captured", compiles=2)
def inplace_int_bit_ops(x, n):
    n &= 14
    n |= 1
    n ^= 3
    n <<= 2
    n >>= 1
    return x * n


@snippet(("INPLACE_AND", "INPLACE_OR", "INPLACE_XOR"), [b3, b3], "captured")
def inplace_bool_tensor_logic(b):
    y = b | b
    y &= T([True, True, False])
    y |= T([False, True, False])
    y ^= b
    return y


@snippet("INPLACE_ADD", [lambda c: ([T([1.0])], T([2.0])), lambda c: ([], T([3.0]))], "B005")
def inplace_add_extends_argument_list(items, x):
    items += [x]
    return len(items)


@snippet("INPLACE_ADD", [lambda c: ((T([1.0]),), T([2.0])), lambda c: ((), T([3.0]))], "captured",
         compiles=2)
def inplace_add_on_argument_tuple(items, x):
    items += (x,)
    return items


@snippet("INPLACE_ADD", [args(v3, const(1)), args(v3, const("a"))], ("captured", "B007"), compiles=2)
def inplace_add_type_error_on_second_call(x, n):
    s = 1
    s += n
    return x * s


# =============================================================================================
# Subscripts: BINARY_SUBSCR, STORE_SUBSCR, DELETE_SUBSCR, BUILD_SLICE
# =============================================================================================

@snippet(("BINARY_SUBSCR", "BUILD_SLICE"), [m22, m22, lambda c: (T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)],
         "captured", compiles=2)
def binary_subscr_tensor(m):
    return m[0], m[1, 1], m[:, 0], m[::-1], m[0:1], m[-1]


@snippet("BINARY_SUBSCR", [lambda c: ([T([1.0]), T([2.0])], {"k": T([3.0])}, (1, T([4.0])))] * 2,
         "captured")
def binary_subscr_containers(l, d, t):
    return l[1] + d["k"] + t[1] * t[0], l[-2]


@snippet("BINARY_SUBSCR", [lambda c: ([T([1.0])] * 3,), lambda c: ([T([1.0])],)], ("captured", "B007"),
         compiles=2)
def binary_subscr_list_out_of_range(l):
    return l[2]


@snippet("BINARY_SUBSCR", [lambda c: ({"a": T([1.0])},), lambda c: ({"b": T([1.0])},)],
         ("captured", "B007"), compiles=2)
def binary_subscr_dict_missing_key(d):
    return d["a"] * 2


@snippet("BINARY_SUBSCR", [v3, v3], "B007")
def binary_subscr_tensor_out_of_range(x):
    return x[5]


@snippet("BINARY_SUBSCR", [args(v3, const(1.5))], "B007")
def binary_subscr_bad_index_type(x, i):
    return x[i]


@snippet("BINARY_SUBSCR", [lambda c: ([T([1.0]), T([2.0]), T([3.0])], 1),
                           lambda c: ([T([1.0]), T([2.0]), T([3.0])], 2),
                           lambda c: ([T([1.0]), T([2.0]), T([3.0])], 2)], "captured", compiles=2)
def binary_subscr_variable_index(l, i):
    return l[i] * 2


@snippet("BUILD_SLICE", [args(v3, const(0, 2, 1)), args(v3, const(1, None, 2)), args(v3, const(None, None, -1))],
         "captured", compiles=3)
def build_slice_variable_bounds(x, a, b, s):
    return x[a:b:s], x[a:b]


@snippet("BUILD_SLICE", [args(v3, const(0, 2, 0))], "B007")
def build_slice_zero_step(x, a, b, s):
    return x[a:b:s]


@snippet("STORE_SUBSCR", TENSOR_CALLS, "captured", compiles=2)
def store_subscr_local_containers(x):
    l = [0, 0]
    l[0] = x
    l[-1] = x * 2
    d = {}
    d["k"] = x + 1
    d[3] = l
    return l, d


@snippet("STORE_SUBSCR", [lambda c: ([T([1.0]), T([2.0])], T([5.0])), lambda c: ([T([1.0]), T([2.0])], T([6.0]))],
         "captured")  # x * 2 in a graph, the store replayed after it
def store_subscr_argument_list(l, x):
    l[0] = x * 2
    return l


@snippet("STORE_SUBSCR", [lambda c: ({"a": 1}, T([5.0]))] * 2, "captured")
def store_subscr_argument_dict(d, x):
    d["b"] = x
    return x


@snippet("STORE_SUBSCR", [v3, v3], "captured")
def store_subscr_new_tensor(x):  # the functional index_put, held by y
    y = x * 1.0
    y[0] = 7.0
    return y


@snippet("STORE_SUBSCR", [v3, v3], ("B004",))
def store_subscr_argument_tensor(x):
    x[1] = 0.5
    return x


@snippet("STORE_SUBSCR", [v3, v3], "B007")
def store_subscr_list_out_of_range(x):
    l = [x]
    l[3] = x
    return l


@snippet("STORE_SUBSCR", [v3], "B007")
def store_subscr_unhashable_key(x):
    d = {}
    d[[1]] = x
    return d


@snippet("STORE_SUBSCR", [v3], "B007")
def store_subscr_tuple_error(x):
    t = (x, x)
    t[0] = 1
    return t


@snippet("DELETE_SUBSCR", TENSOR_CALLS, "captured", compiles=2)
def delete_subscr_local_containers(x):
    l = [x, x * 2, x * 3]
    del l[1]
    d = {"a": x, "b": 2}
    del d["a"]
    del l[0:1]
    return l, d


@snippet("DELETE_SUBSCR", [lambda c: ([T([1.0]), T([2.0])],), lambda c: ([T([1.0]), T([2.0]), T([3.0])],)],
         "captured")
def delete_subscr_argument_list(l):
    del l[0]
    return l


@snippet("DELETE_SUBSCR", [v3, v3], "B007")
def delete_subscr_missing_key(x):
    d = {"a": x}
    del d["b"]
    return d


@snippet("DELETE_SUBSCR", [v3], ("B005", "captured"))
def delete_subscr_tensor(x):
    y = x + 1
    del y[0]
    return y


# =============================================================================================
# Builders: BUILD_TUPLE/LIST/SET/MAP/CONST_KEY_MAP, comprehensions (LIST_APPEND, SET_ADD,
# MAP_ADD), star-unpacking builders (3.7 BUILD_*_UNPACK, 3.9 LIST_EXTEND/LIST_TO_TUPLE/
# SET_UPDATE/DICT_UPDATE/DICT_MERGE)
# =============================================================================================

@snippet(("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP"),
         [args(v3, const("k")), args(v3, const("k")), args(v3, const("j"))], "captured", compiles=2)
def build_containers(x, key):
    y = x * 2
    return (x, y), [y, x, y], sorted({1, 2, len(key)}), {key: y, key + "2": x}


@snippet("BUILD_SET", [args(v3, const("k"))] * 2, "B014")
def build_set_returned(x, key):
    return x * 2, {1, 2, key}


@snippet("BUILD_SET", [v3, v3], "B007")
def build_set_unhashable(x):
    return {1, [x]}


@snippet("BUILD_SET", [v3, v3], "captured")
def build_set_of_tensors_len(x):
    y = x + 1
    return len({x, y, x})


@snippet("BUILD_MAP", [args(v3, const([1]))], "B007")
def build_map_unhashable_key(x, key):
    return {key: x}


@snippet("BUILD_CONST_KEY_MAP", TENSOR_CALLS, "captured", compiles=2)
def build_const_key_map(x):
    return {"a": x, "b": x * 2, "c": [x]}


@snippet("LIST_APPEND", [lambda c: ([T([1.0]), T([2.0])],),
                         lambda c: ([T([1.0]), T([2.0])],),
                         lambda c: ([T([1.0]), T([2.0]), T([5.0])],)], "captured", compiles=2)
def list_append_comprehension(xs):
    return [x * 2 for x in xs], [i for i in range(3) if i != 1]


@snippet("SET_ADD", [v3, v3], "captured")
def set_add_comprehension(x):
    s = {i % 3 for i in range(7)}
    return x * len(s), sorted(s)


@snippet("MAP_ADD", [lambda c: ([T([1.0]), T([2.0])],), lambda c: ([T([3.0])],)], "captured", compiles=2)
def map_add_comprehension(xs):
    return {i: x + i for i, x in enumerate(xs)}


@snippet("MAP_ADD", [v3], "B007")
def map_add_unhashable(x):
    return {(k,) if k else [k]: x for k in range(2)}


def _grow_list(c):
    """The same list each call, one tensor longer."""
    l = c.setdefault("l", [T([1.0])])
    if c.get("called"):
        l.append(T([float(len(l) + 1)]))
    c["called"] = True
    return (l, T([10.0]))


@snippet(("BUILD_LIST_UNPACK", "LIST_EXTEND"), [_grow_list, _grow_list, _grow_list], "captured", compiles=3)
def build_list_unpack_growing_argument(l, x):
    return [*l, x, *l]


@snippet(("BUILD_TUPLE_UNPACK", "LIST_EXTEND", "LIST_TO_TUPLE"), [_grow_list, _grow_list], "captured",
         compiles=2)
def build_tuple_unpack(l, x):
    return (*l, x), (x, *range(2))


@snippet(("BUILD_SET_UNPACK", "SET_UPDATE"), [args(v3, const([1, 2], (2, 3))), args(v3, const([5], ()))],
         # (3.7/3.8: the interpreter runs BUILD_SET_UNPACK at a break before any op, whatever a and b
         # hold, and the resume function captures the rest: one capture of the frame)
         by_op("BUILD_SET_UNPACK", "B001", "captured"), compiles=by_op("BUILD_SET_UNPACK", 1, 2))
def build_set_unpack(x, a, b):
    s = {*a, *b}
    return x * len(s), sorted(s)


@snippet(("BUILD_MAP_UNPACK", "DICT_UPDATE"),
         [lambda c: (T([1.0]), {"a": T([2.0])}, {"b": 1}),
          lambda c: (T([1.0]), {"a": T([2.0])}, {"b": 1}),
          lambda c: (T([1.0]), {"a": T([2.0]), "c": 3}, {"a": 1})], "captured", compiles=2)
def build_map_unpack(x, d1, d2):
    return {**d1, "x": x, **d2}


def _mutate_dict(c):
    d = c.setdefault("d", {"scale": 2.0})
    if c.get("called"):
        d["scale"] = 3.0
    c["called"] = True
    return (T([1.0, 2.0]), d)


@snippet(("BUILD_MAP_UNPACK", "DICT_UPDATE"), [_mutate_dict, _mutate_dict, _mutate_dict], "captured", compiles=2)
def build_map_unpack_mutated_argument(x, d):
    merged = {**d}
    return x * merged["scale"]


@snippet(("BUILD_LIST_UNPACK", "LIST_EXTEND"), [args(v3, const(5))], "B007")
def build_list_unpack_not_iterable(x, n):
    return [x, *n]


@snippet(("BUILD_MAP_UNPACK", "DICT_UPDATE"), [args(v3, const([1, 2]))], "B007")
def build_map_unpack_not_mapping(x, m):
    return {"x": x, **m}


@snippet(("BUILD_LIST_UNPACK", "LIST_EXTEND"), [lambda c: (T([1.0]), iter([T([2.0]), T([3.0])]))] * 2, "B005")
def build_list_unpack_argument_iterator(x, it):
    return [x, *it]


@snippet(("BUILD_SET_UNPACK", "SET_UPDATE"), [lambda c: (T([1.0]), iter([1, 2, 2]))] * 2,
         by_op("BUILD_SET_UNPACK", "B001", "B005"))
def build_set_unpack_argument_iterator(x, it):
    return x * len({*it})


# =============================================================================================
# Unpacking: UNPACK_SEQUENCE, UNPACK_EX
# =============================================================================================

@snippet("UNPACK_SEQUENCE", [lambda c: ((T([1.0]), T([2.0])), [T([3.0]), 4.0])] * 2, "captured")
def unpack_sequence_containers(pair, items):
    a, b = pair
    c, d = items
    (e, f), g = (a, b), c
    return a - b + c * d, e, f, g


@snippet("UNPACK_SEQUENCE", [m22, m22, lambda c: (T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)], "captured", compiles=2)
def unpack_sequence_tensor_rows(m):
    r0, r1 = m
    return r1 - r0


@snippet("UNPACK_SEQUENCE", [lambda c: ((T([1.0]), T([2.0])),), lambda c: ((T([1.0]), T([2.0]), T([3.0])),)],
         ("captured", "B007"), compiles=2)
def unpack_sequence_too_many(pair):
    a, b = pair
    return a * b


@snippet("UNPACK_SEQUENCE", [lambda c: ([T([1.0]), T([2.0])],), lambda c: ([T([1.0])],)],
         ("captured", "B007"), compiles=2)
def unpack_sequence_too_few(pair):
    a, b = pair
    return a * b


@snippet("UNPACK_SEQUENCE", [args(v3, const(7))], "B007")
def unpack_sequence_not_iterable(x, n):
    a, b = n
    return x


@snippet("UNPACK_SEQUENCE", [v3, v3], "B007")
def unpack_sequence_tensor_wrong_length(x):
    a, b = x
    return a


@snippet("UNPACK_SEQUENCE", [lambda c: (T([1.0]), iter([1.0, 2.0]))] * 2, "B009")
def unpack_sequence_argument_iterator(x, it):
    a, b = it
    return x * a + b


@snippet("UNPACK_SEQUENCE", [lambda c: (T([1.0]), "ab")] * 2, "captured")
def unpack_sequence_string(x, s):
    a, b = s
    return x, a + b


@snippet("UNPACK_EX", [lambda c: ([T([1.0]), T([2.0]), T([3.0])],), lambda c: ([T([1.0]), T([2.0]), T([3.0])],),
                       lambda c: ([T([1.0]), T([2.0])],)], "captured", compiles=2)
def unpack_ex_star(items):
    first, *rest = items
    *init, last = items
    a, *mid, b = items
    return first, rest, init, last, a * b, mid


@snippet("UNPACK_EX", [lambda c: ([T([1.0]), T([2.0])],), lambda c: ([T([1.0])],)], ("captured", "B007"), compiles=2)
def unpack_ex_not_enough(items):
    a, b, *rest = items
    return a + b, rest


@snippet("UNPACK_EX", [m22, m22], "captured")
def unpack_ex_tensor(m):
    first, *rest = m
    return first, rest


@snippet("UNPACK_EX", [lambda c: (T([1.0]), iter([1.0, 2.0]))] * 2, "B009")
def unpack_ex_argument_iterator(x, it):
    a, *b = it
    return x * a, b


# =============================================================================================
# Iteration and jumps: GET_ITER, FOR_ITER, JUMP_*, POP_JUMP_IF_*, *_OR_POP
# =============================================================================================

@snippet(("GET_ITER", "FOR_ITER", "JUMP_ABSOLUTE"), [lambda c: ([T([1.0]), T([2.0])], T([0.5]))] * 2 +
         [lambda c: ([T([1.0]), T([2.0]), T([4.0])], T([0.5]))], "captured", compiles=2)
def for_iter_list_argument(xs, y):
    total = y
    for x in xs:
        total = total + x
    for i in range(3):
        total = total * 2
    return total


@snippet(("GET_ITER", "FOR_ITER"), [m22, m22], "captured")
def for_iter_tensor_rows(m):
    out = []
    for row in m:
        out.append(row.sum())
    return out


@snippet(("GET_ITER", "FOR_ITER"), [lambda c: (T([1.0]), iter([1.0, 2.0]))] * 2, "B005")
def for_iter_argument_iterator(x, it):
    for v in it:
        x = x + v
    return x


@snippet("GET_ITER", [args(v3, const(5))], "B007")
def get_iter_not_iterable(x, n):
    for i in n:
        x = x + i
    return x


@snippet(("GET_ITER", "FOR_ITER"), [lambda c: (T([1.0]), {"a": 1, "b": 2})] * 2, "captured")
def for_iter_dict_items(x, d):
    out = x
    for k, v in d.items():
        out = out * v
    return out, [k for k in d]


@snippet(("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "JUMP_FORWARD"),
         [args(v3, const(True, 0)), args(v3, const(True, 0)), args(v3, const(False, 3))], "captured", compiles=2)
def pop_jump_branches(x, flag, n):
    if flag:
        y = x + 1
    else:
        y = x - 1
    if not n:
        y = y * 2
    while n:
        n -= 1
        y = y + n
    return y


@snippet(("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"),
         [args(v3, const(0, "a")), args(v3, const(2, "")), args(v3, const(2, "b"))], "captured", compiles=3)
def and_or_values(x, n, s):
    a = n and s
    b = s or n
    c = n and x
    d = n or x
    return a, b, c, d


@snippet("JUMP_IF_FALSE_OR_POP", [args(v3, v3b)] * 2, "B007")
def and_on_tensor_ambiguous(a, b):
    return a and b


@snippet("JUMP_IF_TRUE_OR_POP", [lambda c: (T([0.0]), T([2.0])), lambda c: (T([1.0]), T([2.0]))], "B003")
def or_on_one_element_tensor(a, b):
    return a or b


@snippet("POP_JUMP_IF_FALSE", [lambda c: (T([1.0, -1.0]),)] * 2, ("B003", "captured"))
def branch_on_tensor_value(x):
    if x.sum() > 0:
        return x
    return -x


@snippet(("FOR_ITER",), [lambda c: ([T([1.0]), T([2.0]), T([3.0])],)] * 2, "captured")
def for_break_continue(xs):
    out = []
    for i, x in enumerate(xs):
        if i == 0:
            continue
        out.append(x * i)
        if i == 1:
            break
    else:
        out.append(None)
    return out


# =============================================================================================
# Names: LOAD_CONST, LOAD/STORE/DELETE_FAST, LOAD/STORE/DELETE_GLOBAL, closures
# (LOAD_CLOSURE, LOAD/STORE/DELETE_DEREF), attributes (LOAD/STORE/DELETE_ATTR)
# =============================================================================================

@snippet(("LOAD_CONST", "LOAD_FAST", "STORE_FAST", "DELETE_FAST"), TENSOR_CALLS, "captured", compiles=2)
def fast_locals(x):
    y = x * 2.5
    z = y
    del y
    return z, (1, "two", None, 3.0)


@snippet("DELETE_FAST", [v3, v3], ("B007", "captured"))  # a graph for `x + 1`, then a break
def delete_fast_then_load_unbound(x):
    y = x + 1
    del y
    return y


@snippet("LOAD_FAST", [args(v3, const(False)), args(v3, const(True))], ("B007", "captured"), compiles=2)
def load_fast_unbound_on_a_branch(x, flag):
    if flag:
        y = x
    return y


@snippet("DELETE_FAST", [v3, v3], "B007")
def delete_fast_unbound(x):
    del x
    del x


def _set_global(name, value):
    """Sets a global (a fresh value each call), then gives the call its tensor."""
    def make(c):
        globals()[name] = value() if callable(value) else value
        return (T([1.0, 2.0]),)
    return make


@snippet("LOAD_GLOBAL", [_set_global("G_SCALE", 2.0), _set_global("G_SCALE", 2.0), _set_global("G_SCALE", 3.0)],
         "captured", globals_={"G_SCALE": lambda: 2.0}, compiles=2)
def load_global_guarded(x):
    return x * G_SCALE  # noqa: F821


@snippet("LOAD_GLOBAL", [_set_global("G_TENSOR", lambda: T([5.0, 6.0])), _set_global("G_TENSOR", lambda: T([7.0, 8.0])),
                         _set_global("G_TENSOR", lambda: T([1.0, 2.0, 3.0]))], ("captured", "B007"),
         globals_={"G_TENSOR": lambda: T([1.0, 1.0])}, compiles=2)
def load_global_tensor(x):
    return x + G_TENSOR  # noqa: F821


@snippet("LOAD_GLOBAL", [v3, v3], "B007", globals_={"G_MISSING": ABSENT})
def load_global_missing(x):
    return x + G_MISSING  # noqa: F821


@snippet("LOAD_GLOBAL", [v3, _set_global("G_LATE", lambda: T([1.0, 1.0]))], ("B007", "captured"),
         globals_={"G_LATE": ABSENT}, compiles=2)
def load_global_defined_between_calls(x):
    return G_LATE * 2  # noqa: F821


@snippet("LOAD_GLOBAL", [v3, v3], "captured")
def load_global_builtin(x):
    return len(x), abs(x), max(1, 2)


@snippet("STORE_GLOBAL", TENSOR_CALLS, "captured", globals_={"G_OUT": lambda: None, "G_COUNT": lambda: 0})
def store_global(x):
    global G_OUT, G_COUNT
    G_OUT = x * 2
    G_COUNT = G_COUNT + 1  # noqa: F821
    return G_OUT


@snippet("DELETE_GLOBAL", [v3, v3], "captured", globals_={"G_DOOMED": lambda: 1})
def delete_global(x):
    global G_DOOMED
    del G_DOOMED
    return x


@snippet(("LOAD_CLOSURE", "LOAD_DEREF", "MAKE_FUNCTION"), TENSOR_CALLS, "captured", compiles=2)
def closure_read(x):
    k = x * 2

    def inner(y):
        return y + k
    return inner(x), inner(1.0)


@snippet(("STORE_DEREF", "LOAD_DEREF"), TENSOR_CALLS, "captured", compiles=2)
def closure_nonlocal_write(x):
    acc = x

    def bump(v):
        nonlocal acc
        acc = acc + v
    bump(1.0)
    bump(x)
    return acc


@snippet("STORE_DEREF", TENSOR_CALLS, "captured", compiles=2)
def closure_cell_reassigned_in_root(x):
    k = 1.0

    def get():
        return k
    k = x * 3
    return get()


def _make_counter():
    scale = 2.0

    def step(x):
        nonlocal scale
        scale = scale + 1.0
        return x * scale
    return step


register(_make_counter(), "STORE_DEREF", [v3, v3], "captured", factory=_make_counter,
         name="closure_store_enclosing_cell")


def _make_reader():
    scale = T([2.0])

    def read(x):
        return x * scale
    return read


register(_make_reader(), "LOAD_DEREF", TENSOR_CALLS, "captured", compiles=2, factory=_make_reader,
         name="closure_read_enclosing_cell")

CELL_SETTERS = []


def _make_reader_with_setter():
    scale = 2.0

    def read(x):
        return x * scale

    def set_scale(v):
        nonlocal scale
        scale = v
    del CELL_SETTERS[:]
    CELL_SETTERS.append(set_scale)
    return read


def _set_cell(v):
    def make(c):
        CELL_SETTERS[0](v)
        return (T([1.0, 2.0]),)
    return make


register(_make_reader_with_setter(), "LOAD_DEREF", [_set_cell(2.0), _set_cell(2.0), _set_cell(4.0)], "captured",
         compiles=2, factory=_make_reader_with_setter, name="closure_enclosing_cell_changes_between_calls")


@snippet("LOAD_DEREF", [v3, v3], "B007")
def load_deref_unbound(x):
    def inner():
        return k
    r = inner()
    k = x
    return r, k


@snippet("DELETE_DEREF", [v3, v3], "B001")
def delete_deref(x):
    k = x * 2

    def inner():
        return k
    r = inner()
    del k
    return r


@snippet("DELETE_DEREF", [v3], "B001")
def delete_deref_then_load(x):
    k = x * 2

    def inner():
        return k
    del k
    return inner()


@snippet("LOAD_CLOSURE", TENSOR_CALLS, "B014")
def closure_escapes(x):
    k = x + 1

    def inner(y):
        return y * k
    return inner


@snippet("LOAD_ATTR", [m22, m22, lambda c: (T([1.0, 2.0, 3.0]),)], "captured", compiles=2)
def load_attr_tensor(x):
    return x.shape, x.dtype, x.ndim, x.T if x.ndim == 2 else x


@snippet("LOAD_ATTR", [lambda c: (T([1.0]), Box(T([2.0]))), lambda c: (T([1.0]), Box(3.0)),
                       lambda c: (T([1.0]), Box(3.0))], "captured", compiles=2)
def load_attr_instance(x, box):
    return x * box.v


def _box_changes(c):
    b = c.setdefault("box", Box(2.0))
    if c.get("called"):
        b.v = 5.0
    c["called"] = True
    return (T([1.0, 2.0]), b)


@snippet("LOAD_ATTR", [_box_changes, _box_changes, _box_changes], "captured", compiles=2)
def load_attr_instance_mutated_between_calls(x, box):
    return x * box.v


@snippet("LOAD_ATTR", [lambda c: (T([1.0]), Box(1.0))] * 2, "B007")
def load_attr_missing(x, box):
    return x * box.missing


@snippet("LOAD_ATTR", [v3, v3], "B007")
def load_attr_missing_on_tensor(x):
    return x.no_such_attribute


@snippet("STORE_ATTR", [lambda c: (T([1.0]), Box(1.0))] * 2, "captured")
def store_attr_argument(x, box):
    box.v = x * 2
    box.w = 1
    return box


@snippet("STORE_ATTR", [lambda c: (T([1.0]), Slotted(1.0))] * 2, "B005")
def store_attr_slots_error(x, obj):
    obj.other = x
    return obj


@snippet("STORE_ATTR", [v3], "B005")
def store_attr_on_tensor(x):
    x.note = "hi"
    return x.note


@snippet("DELETE_ATTR", [lambda c: (T([1.0]), Box(1.0))] * 2, "captured")
def delete_attr_argument(x, box):
    del box.v
    return x, box


@snippet("DELETE_ATTR", [lambda c: (T([1.0]), Box(1.0))] * 2, "captured")
def delete_attr_missing(x, box):
    del box.nope
    return x


# =============================================================================================
# Methods and calls: LOAD_METHOD/CALL_METHOD, CALL_FUNCTION, CALL_FUNCTION_KW, CALL_FUNCTION_EX
# (with 3.7's BUILD_*_UNPACK_WITH_CALL, 3.9's DICT_MERGE), MAKE_FUNCTION
# =============================================================================================

@snippet(("LOAD_METHOD", "CALL_METHOD"), [m22, m22, lambda c: (T([1.0, 2.0, 3.0]),)], "captured", compiles=2)
def method_calls_on_tensor(x):
    return x.sum(), x.reshape((-1,)), x.abs().max(), "a-b".split("-")


@snippet(("LOAD_METHOD", "CALL_METHOD"), TENSOR_CALLS, "captured", compiles=2)
def method_calls_on_local_containers(x):
    l = []
    l.append(x)
    l.extend([x * 2, x * 3])
    l.insert(0, x - 1)
    d = {}
    d.setdefault("a", x)
    d.update(b=1)
    return l.pop(), l, d, list(d.keys())


@snippet(("LOAD_METHOD", "CALL_METHOD"), [lambda c: ([T([1.0])], T([2.0]))] * 2, "captured")
def method_call_mutates_argument(l, x):
    l.append(x)
    return len(l)  # (read through the list's overlay: what plain Python sees after the append)


@snippet(("LOAD_METHOD", "CALL_METHOD"), [lambda c: ([T([1.0])], T([2.0]))] * 2, "B005")
def method_call_then_iterates_the_argument(l, x):
    l.append(x)
    return [v * 2 for v in l]  # (iterating a changed list still stops)


@snippet("LOAD_METHOD", [v3, v3], "B007")
def method_missing(x):
    return x.no_such_method()


@snippet("CALL_METHOD", [m22, m22], "B007")
def method_call_bad_arguments(x):
    return x.reshape((3, 3))


@snippet("CALL_FUNCTION", TENSOR_CALLS, "captured", compiles=2)
def call_function_inline(x):
    return add_scaled(x), two(x, 1.0), abs(x), len([x, x])


@snippet("CALL_FUNCTION", [v3, v3], "B007")
def call_function_too_many_arguments(x):
    return two(x, x, x)


@snippet("CALL_FUNCTION", [v3, v3], "B008")
def call_function_not_callable(x):
    n = 5
    return n(x)


@snippet("CALL_FUNCTION", [v3, v3], "captured")
def call_function_print(x):
    print("value", x.shape, 7)
    return x


@snippet("CALL_FUNCTION_KW", [v3, v3], "captured")
def call_function_kw_print_replayed(x):
    y = x * 2
    print("y", y, [y, 1], sep=" | ", end=" <\n")
    return y + 1


@snippet("CALL_FUNCTION", [lambda c: (T([1.0]), Box(2.0))] * 2, "captured")
def call_function_user_class(x, box):
    return Box(x).v + box.v


class Interned:
    """__new__ of its own: user code the simulation does not model."""
    def __new__(cls, v):
        obj = super().__new__(cls)
        obj.v = v
        return obj


@snippet("CALL_FUNCTION", [lambda c: (T([1.0]),)] * 2, "B008")
def call_function_user_class_with_new(x):
    return Interned(x).v + 1.0


@snippet("CALL_FUNCTION_KW", TENSOR_CALLS, "captured", compiles=2)
def call_function_kw(x):
    return add_scaled(x, scale=2.0), add_scaled(b=3.0, a=x, scale=0.5), pj.ones(shape=(2,), dtype=pj.float32)


@snippet("CALL_FUNCTION_KW", [v3, v3], "B007")
def call_function_kw_bad_keyword(x):
    return add_scaled(x, nope=2.0)


@snippet("CALL_FUNCTION_KW", [v3, v3], "B007")
def call_function_kw_duplicate_argument(x):
    return add_scaled(x, a=x)


@snippet("CALL_FUNCTION_KW", [v3, v3], "B007")
def call_function_kw_missing_keyword_only(x):
    def needs(a, *, k):
        return a * k
    return needs(x, j=1)


@snippet(("CALL_FUNCTION_EX", "BUILD_TUPLE_UNPACK_WITH_CALL", "BUILD_MAP_UNPACK_WITH_CALL", "DICT_MERGE",
          "LIST_TO_TUPLE"),
         [lambda c: ([T([1.0]), 2.0], {"scale": 3.0}), lambda c: ([T([1.0]), 2.0], {"scale": 3.0}),
          lambda c: ([T([1.0])], {"scale": 4.0, "b": 0.5})], "captured", compiles=2)
def call_function_ex(pos, kw):
    return add_scaled(*pos, **kw), add_scaled(*pos, *[], **kw, **{}), star_all(*pos, 1, **kw)


@snippet(("CALL_FUNCTION_EX",), [args(v3, const((1.0,)))], "captured")
def call_function_ex_args_only(x, extra):
    return add_scaled(x, *extra)


@snippet(("CALL_FUNCTION_EX", "BUILD_MAP_UNPACK_WITH_CALL", "DICT_MERGE"),
         [lambda c: (T([1.0]), {"scale": 2.0}, {"scale": 3.0})] * 2, "B007")
def call_function_ex_duplicate_keyword(x, k1, k2):
    return add_scaled(x, **k1, **k2)


@snippet("CALL_FUNCTION_EX", [args(v3, const(5))], "B007")
def call_function_ex_star_not_iterable(x, n):
    return add_scaled(x, *n)


@snippet("CALL_FUNCTION_EX", [args(v3, const({1: 2}))], "B007")
def call_function_ex_non_string_keyword(x, kw):
    return add_scaled(x, **kw)


@snippet("CALL_FUNCTION_EX", [args(v3, const([1, 2]))], "B008")
def call_function_ex_kwargs_not_mapping(x, kw):
    return add_scaled(x, **kw)


@snippet("CALL_FUNCTION_EX", [lambda c: (T([1.0]), iter([1.0]))] * 2, "B005")
def call_function_ex_argument_iterator(x, it):
    return add_scaled(x, *it)


@snippet("MAKE_FUNCTION", TENSOR_CALLS, "captured", compiles=2)
def make_function_defaults_kwdefaults_annotations(x):
    def f(a, b=2.0, *, c=3.0) -> "ret":
        return a * b + c
    g = lambda a, k=x: a - k  # noqa: E731
    return f(x), f(x, 1.0, c=0.0), g(x * 2)


@snippet("MAKE_FUNCTION", [v3, v3], "B014")
def make_function_returned(x):
    return lambda a: a + 1


@snippet("CALL_FUNCTION", [v3, v3], "captured")
def call_jitted_function(x):
    return JITTED_HELPER(x) + 1


JITTED_HELPER = pj.jit(lambda a: a * 3)


@snippet("CALL_FUNCTION", [v3, v3], ("B012", "captured"))
def call_recursive(x, n=2):
    if n == 0:
        return x
    return call_recursive(x * 2, n - 1)


# =============================================================================================
# Comparisons: COMPARE_OP (3.7: also in/is/exception match), IS_OP, CONTAINS_OP
# =============================================================================================

@snippet("COMPARE_OP", [args(v3, v3b), args(v3, v3b), args(m22, m22)], "captured", compiles=2)
def compare_tensors(a, b):
    return a < b, a <= b, a == b, a != b, a > b, a >= b, a > 0


@snippet("COMPARE_OP", [args(v3, const(1, 2)), args(v3, const(1, 2)), args(v3, const(3, 2))], "captured", compiles=2)
def compare_python_values(x, a, b):
    if a < b:
        return x * 1, a == b, "a" < "b", (1, 2) < (1, 3)
    return x * 2, a != b, [1] == [1], None == 0  # noqa: E711


@snippet("COMPARE_OP", [args(v3, const(1, "a"))], "B007")
def compare_incomparable(x, a, b):
    return x, a < b


@snippet("COMPARE_OP", [args(v3, lambda c: (T([1.0, 2.0]),))], "B007")
def compare_tensors_broadcast_error(a, b):
    return a < b


@snippet(("IS_OP|COMPARE_OP",), [args(v3, const(None)), args(v3, const(None)), args(v3, const(2.0))],
         "captured", compiles=2)
def is_none(x, opt):
    missing = opt is None  # a value: IS_OP (3.11 fuses `if opt is None` into its jump)
    if missing:
        return x
    if opt is not None:
        return x * opt


# 3.11 tests a `while` condition again at the bottom: the jumps back on None / not None
@snippet(("POP_JUMP_BACKWARD_IF_NOT_NONE",), [lambda c: (T([1.0]), (1, (2, None))), lambda c: (T([2.0]), None)],
         "captured", compiles=2)
def while_not_none_walks_a_chain(x, node):
    while node is not None:
        x = x + node[0]
        node = node[1]
    return x


@snippet(("POP_JUMP_BACKWARD_IF_NONE",), [args(v3, const(None)), args(v3, const(2.0))], "captured", compiles=2)
def while_none_until_set(x, v):
    while v is None:
        v = 3.0
    return x * v


@snippet(("IS_OP|COMPARE_OP",), [lambda c: (T([1.0]), Box(1), None)] * 2, "captured")
def is_objects(x, a, b):
    return x, a is b, a is not b, b is None, a is a


@snippet(("IS_OP|COMPARE_OP",), [v3, v3], "B009")
def is_between_tensors(x):
    y = x
    return y is x


@snippet(("CONTAINS_OP|COMPARE_OP",), [args(v3, const("a", ["a", "b"], {"a": 1})),
                                         args(v3, const("a", ["a", "b"], {"a": 1})),
                                         args(v3, const("z", ["a"], {}))], "captured", compiles=2)
def contains_values(x, k, l, d):
    return x, k in l, k not in l, k in d, 1 in (1, 2), "b" in "abc"


@snippet(("CONTAINS_OP|COMPARE_OP",), [args(v3, const(3))], "B007")
def contains_not_a_container(x, n):
    return x, 1 in n


@snippet(("CONTAINS_OP|COMPARE_OP",), [args(v3, const(1.0))] * 2, "B003")
def contains_in_tensor(x, v):
    return v in x


@snippet(("CONTAINS_OP|COMPARE_OP",), [lambda c: (T([1.0]), [Box(1)])] * 2, "B009")
def contains_user_objects(x, l):
    return x, Box in l, l[0] in l


# =============================================================================================
# Strings: FORMAT_VALUE, BUILD_STRING
# =============================================================================================

@snippet(("FORMAT_VALUE", "BUILD_STRING"), [args(v3, const(7, "ab", 2.5))] * 2 + [args(v3, const(8, "c", 1.0))],
         "captured", compiles=2)
def format_constants(x, n, s, f):
    return x, f"{n}-{s}", f"{n:>4}|{f:.3f}|{s!r}|{s!s}|{'é'!a}", f"{n:{s[0]}^5}", f"{f:{n}}"


@snippet("FORMAT_VALUE", [v3, v3], "B002")
def format_tensor(x):
    return f"{x}"


@snippet("FORMAT_VALUE", [args(v3, const(5))], "B007")
def format_bad_spec(x, n):
    return x, f"{n:q}"


@snippet("FORMAT_VALUE", [lambda c: (T([1.0]), Box(1))] * 2, "B002")
def format_user_object(x, b):
    return x, len(f"{b!r}") > 0


@snippet("BUILD_STRING", [args(v3, const("a", "b"))], "captured")
def build_string_two_parts(x, a, b):
    return x, f"{a}{b}", f"<{a}>"


# =============================================================================================
# Exceptions and blocks: SETUP_FINALLY, POP_BLOCK, POP_EXCEPT, RAISE_VARARGS, SETUP_WITH,
# 3.7's SETUP_EXCEPT/SETUP_LOOP/BREAK_LOOP/CONTINUE_LOOP/END_FINALLY/WITH_CLEANUP_*,
# 3.9's RERAISE/WITH_EXCEPT_START/JUMP_IF_NOT_EXC_MATCH/LOAD_ASSERTION_ERROR/ROT_FOUR
# =============================================================================================

@snippet(("SETUP_EXCEPT|SETUP_FINALLY", "POP_BLOCK", "END_FINALLY"), TENSOR_CALLS, "captured", compiles=2)
def try_except_not_raising(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


@snippet(("SETUP_FINALLY", "POP_BLOCK", "END_FINALLY"), TENSOR_CALLS, "captured", compiles=2)
def try_finally_not_raising(x):
    try:
        y = x * 2
    finally:
        z = 3
    return y + z


# 3.7 returns through the finally block by unwinding: a graph break at the return (inside the
# try block, which the resume function enters again) where a graph precedes it, else B016.
@snippet(("SETUP_FINALLY", "END_FINALLY", "RERAISE"), TENSOR_CALLS, "captured", compiles=2)
def return_through_finally(x):
    try:
        return x * 2
    finally:
        pass


@snippet(("POP_EXCEPT", "CHECK_EXC_MATCH|JUMP_IF_NOT_EXC_MATCH|COMPARE_OP", "RERAISE", "END_FINALLY"),
         [lambda c: ([T([1.0])],), lambda c: ([],), lambda c: ([T([2.0])],)], "captured", compiles=2)
def try_except_catches_index_error(items):  # the lookup's IndexError is raised in the simulation
    try:
        v = items[0] * 2
    except IndexError as e:
        v = str(e)
    return v


@snippet(("RERAISE", "END_FINALLY"), [lambda c: ({"a": T([1.0])},), lambda c: ({},)],
         ("captured", "B007"), compiles=2)
def try_except_other_exception_propagates(d):
    try:
        return d["a"] * 2
    except IndexError:
        return None


@snippet(("RAISE_VARARGS",), [args(v3, const(0)), args(v3, const(1)), args(v3, const(2)), args(v3, const(3))],
         ("captured", "B007"), compiles=4)
def raise_varargs(x, n):
    if n == 1:
        raise ValueError("bad value %d" % n)
    if n == 2:
        raise KeyError
    if n == 3:
        raise TypeError("outer") from ValueError("inner")
    return x


@snippet(("RAISE_VARARGS", "POP_EXCEPT", "ROT_FOUR"), [v3, v3], "captured")
def reraise_in_handler_and_return(x):  # the handlers run at capture time
    try:
        try:
            raise ValueError
        except ValueError:
            raise
    except ValueError as e:
        return x, str(e)


@snippet("RAISE_VARARGS", [v3, v3], "B007")
def raise_non_exception(x):
    raise x


@snippet("RAISE_VARARGS", [v3, v3], "B007")
def raise_constructed_exception(x):
    raise RuntimeError("shape %s" % (x.shape,))


@snippet(("LOAD_ASSERTION_ERROR", "RAISE_VARARGS"), [args(v3, const(1)), args(v3, const(0))], ("captured", "B007"),
         compiles=2)
def assert_without_message(x, n):
    assert n
    return x


@snippet(("SETUP_WITH", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH", "WITH_EXCEPT_START"),
         [lambda c: (T([1.0, 2.0]), Ctx())] * 2, "captured")
def with_block(x, ctx):  # __enter__/__exit__ simulated (Python methods)
    with ctx as k:
        y = x * k
    return y


@snippet(("SETUP_WITH", "WITH_EXCEPT_START"),
         [lambda c: (T([1.0]), 0, Ctx(swallow=True)), lambda c: (T([1.0]), 1, Ctx(swallow=True))],
         "captured")
def with_block_swallowing_exception(x, n, ctx):  # __exit__ gets the exception and swallows it
    with ctx:
        x = x * 2
        if n:
            raise ValueError("swallowed")
        x = x + 1
    return x


@snippet(("SETUP_WITH",), [lambda c: (T([1.0]), Ctx())] * 2, "B007")
def with_block_propagating_exception(x, ctx):  # the IndexError reaches __exit__ as in eager
    with ctx:
        return x[3]


@snippet("LOAD_ASSERTION_ERROR", [args(v3, const(1)), args(v3, const(1)), args(v3, const(0))],
         ("captured", "B007"), compiles=2)
def assert_statement(x, n):
    assert n > 0, "n must be positive, got %d" % n
    return x * n


@snippet(("SETUP_LOOP", "BREAK_LOOP"), [lambda c: ([T([1.0]), T([2.0]), T([3.0])],)] * 2, "captured")
def loop_break(xs):
    total = xs[0]
    for x in xs:
        total = total + x
        if len(total.shape) == 1:
            break
    while True:
        total = total * 2
        break
    return total


@snippet(("CONTINUE_LOOP", "SETUP_EXCEPT"), [lambda c: ([T([1.0]), T([2.0])],)] * 2, "captured")
def continue_inside_try(xs):
    out = []
    for x in xs:
        try:
            if len(out) == 0:
                out.append(x)
                continue
        except ValueError:
            pass
        out.append(x * 10)
    return out


@snippet(("CONTINUE_LOOP", "SETUP_FINALLY"), [lambda c: ([T([1.0]), T([2.0])],)] * 2,
         by_op("CONTINUE_LOOP", "B016", "captured"))
def continue_through_finally(xs):
    out = []
    for x in xs:
        try:
            if len(out) == 0:
                out.append(x)
                continue
        finally:
            out.append(0)
    return out


@snippet(("BREAK_LOOP", "SETUP_FINALLY"), [lambda c: ([T([1.0]), T([2.0])],)] * 2,
         by_op("BREAK_LOOP", "B016", "captured"))
def break_through_finally(xs):
    out = []
    for x in xs:
        try:
            out.append(x)
            break
        finally:
            out.append(1)
    return out


# =============================================================================================
# Imports: IMPORT_NAME, IMPORT_FROM (IMPORT_STAR: module-level code below)
# =============================================================================================

@snippet(("IMPORT_NAME", "IMPORT_FROM"), [v3, v3], "B018")
def import_module(x):
    import math
    from math import pi
    return x * math.e * pi


@snippet("IMPORT_NAME", [v3, v3], "B018")
def import_missing_module(x):
    import no_such_module_for_opdiff  # noqa: F401
    return x


@snippet("IMPORT_FROM", [v3, v3], "B018")
def import_missing_name(x):
    from math import no_such_name  # noqa: F401
    return x


# =============================================================================================
# Classes: LOAD_BUILD_CLASS; class bodies hold LOAD_NAME/STORE_NAME/DELETE_NAME,
# LOAD_CLASSDEREF, SETUP_ANNOTATIONS (class and module bodies are never capture candidates)
# =============================================================================================

@snippet(("LOAD_BUILD_CLASS", "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "LOAD_CLASSDEREF", "SETUP_ANNOTATIONS"),
         TENSOR_CALLS, "B001")
def class_statement(x):
    scale = 2.0

    class K(object):
        k: float = 1.0
        tmp = 3
        twice = tmp * 2
        del tmp
        s = scale

        def run(self, y):
            return y * self.s
    return K.twice, K.s, K.__annotations__, sorted(n for n in vars(K) if not n.startswith("__")), x * K.s


@snippet("LOAD_NAME", [v3, v3], "B001")
def class_body_name_error(x):
    class K(object):
        a = no_such_name_in_class_body  # noqa: F821
    return x


@snippet("DELETE_NAME", [v3, v3], "B001")
def class_body_delete_missing(x):
    class K(object):
        del missing_in_class_body  # noqa: F821
    return x


# =============================================================================================
# Generators and coroutines: YIELD_VALUE, YIELD_FROM, GET_YIELD_FROM_ITER, GET_AWAITABLE,
# GET_AITER, GET_ANEXT, BEFORE_ASYNC_WITH, SETUP_ASYNC_WITH, END_ASYNC_FOR
# =============================================================================================

@snippet(("YIELD_VALUE",), [args(v3, const(3)), args(v3, const(3)), args(v3, const(0))], "never", drive="gen")
def generator_function(x, n):
    for i in range(n):
        yield x * i
    yield "end"


@snippet(("YIELD_FROM", "GET_YIELD_FROM_ITER"), [args(v3, const(2))] * 2, "never", drive="gen")
def generator_yield_from(x, n):
    got = yield from gen_values(x, n)
    yield from [x + 1]
    return got


@snippet("CALL_FUNCTION", [args(v3, const(2))] * 2, "captured")
def calls_a_generator(x, n):
    return list(gen_values(x, n))


@snippet("CALL_FUNCTION", [args(v3, const(2))] * 2, "captured")
def zips_a_generator(x, n):  # zip's generator model (pijit/_lazy_builtins.py) consumes it lazily
    return list(zip(gen_values(x, n)))


@snippet(("YIELD_VALUE",), [lambda c: ([T([1.0]), T([2.0])],)] * 2, "captured")
def generator_expression(xs):
    return tuple(x * 2 for x in xs)


@snippet("YIELD_VALUE", [v3], "never", drive="gen")
def generator_raises(x):
    yield x
    raise KeyError("stop here")


@snippet(("GET_AWAITABLE", "YIELD_FROM"), [v3, v3], "never", drive="coro")
async def coroutine_await(x):
    a = await Awaitable(x * 2)
    return a + 1


@snippet(("GET_AITER", "GET_ANEXT", "END_ASYNC_FOR", "SETUP_EXCEPT|SETUP_FINALLY"),
         [lambda c: (AIter([T([1.0]), T([2.0])]),)] * 2, "never", drive="coro")
async def coroutine_async_for(it):
    total = 0
    async for v in it:
        total = total + v
    return total


@snippet(("BEFORE_ASYNC_WITH", "SETUP_ASYNC_WITH", "WITH_CLEANUP_START", "WITH_EXCEPT_START"),
         [args(v3, const(0)), args(v3, const(1))], "never", drive="coro")
async def coroutine_async_with(x, n):
    async with ACtx() as k:
        if n:
            raise ValueError("inside async with")
        return x * k


@snippet(("ASYNC_GEN_WRAP", "GET_ANEXT"), [v3, v3], "never", drive="coro")
async def coroutine_over_an_async_generator(x):
    async def halves(t):  # (3.11 wraps what an async generator yields: ASYNC_GEN_WRAP)
        yield t * 0.5
        yield t * 0.25
    total = x
    async for v in halves(x):
        total = total + v
    return total


@snippet("GET_AWAITABLE", [v3], "never", drive="coro")
async def coroutine_await_non_awaitable(x):
    return await x


@snippet(("CALL_FUNCTION",), [v3, v3], "B015")
def calls_a_coroutine(x):
    return run_coro(coroutine_await(x))


# =============================================================================================
# Code that is not a function body: module-level code run as a function (its frame's locals
# are this module's globals): PRINT_EXPR, IMPORT_STAR, STORE_NAME/LOAD_NAME/DELETE_NAME,
# SETUP_ANNOTATIONS
# =============================================================================================

register(module_code_function("OPDIFF_X * 2; OPDIFF_X + 1; None\n", "print_expr_single"),
         "PRINT_EXPR", [lambda c: ()] * 2, "never", globals_={"OPDIFF_X": lambda: T([1.0, 2.0])})

register(module_code_function("from math import *\nOPDIFF_R = OPDIFF_X * floor(pi)\n", "import_star_module"),
         ("IMPORT_STAR", "STORE_NAME", "LOAD_NAME"), [lambda c: ()] * 2, "never",
         globals_={"OPDIFF_X": lambda: T([1.0, 2.0]), "OPDIFF_R": ABSENT, "floor": ABSENT, "pi": ABSENT})

register(module_code_function("OPDIFF_A: int = 3\nOPDIFF_R = OPDIFF_X * OPDIFF_A\ndel OPDIFF_A\n",
                              "annotations_module"),
         ("SETUP_ANNOTATIONS", "STORE_NAME", "DELETE_NAME"), [lambda c: ()] * 2, "never",
         globals_={"OPDIFF_X": lambda: T([1.0, 2.0]), "OPDIFF_R": ABSENT, "OPDIFF_A": ABSENT,
                   "__annotations__": ABSENT})

register(module_code_function("OPDIFF_R = OPDIFF_X * opdiff_undefined_name\n", "load_name_error_module"),
         "LOAD_NAME", [lambda c: ()] * 2, "never", globals_={"OPDIFF_X": lambda: T([1.0]), "OPDIFF_R": ABSENT})


# =============================================================================================
# EXTENDED_ARG: a jump past byte 255 (the decoder folds the prefix into the jump's argument)
# =============================================================================================

_LONG_BODY = "".join("        x = x + %d.0\n" % i for i in range(70))
register(generated("def extended_arg_long_jump(x, flag):\n    if flag:\n%s    return x * 2\n" % _LONG_BODY,
                   "extended_arg_long_jump"),
         "EXTENDED_ARG", [args(v3, const(True)), args(v3, const(True)), args(v3, const(False))], "captured", compiles=2)

_MANY_NAMES = "".join("    v%d = x * %d.5\n" % (i, i) for i in range(300))
register(generated("def extended_arg_many_locals(x):\n%s    return v0 + v299 + v150\n" % _MANY_NAMES,
                   "extended_arg_many_locals"),
         "EXTENDED_ARG", TENSOR_CALLS, "captured", compiles=2)


# =============================================================================================
# Aliasing and identity across opcodes: one tensor reached along two argument paths (hashing it
# into sets and dicts), results that are arguments or hold them, `is` between arguments
# =============================================================================================

def _same_then_distinct(c):
    """Call 1: one tensor passed twice; call 2: two tensors; call 3: one tensor twice again."""
    n = c.get("n", 0)
    c["n"] = n + 1
    a = T([1.0, 2.0])
    return (a, a) if n != 1 else (a, T([1.0, 2.0]))


@snippet("BUILD_SET", [_same_then_distinct] * 3, "captured", compiles=2)
def build_set_one_tensor_twice(a, b):
    return a * 1, len({a, b})


@snippet("BUILD_MAP", [_same_then_distinct] * 3, "captured", compiles=2)
def build_map_one_tensor_twice(a, b):
    return a * 1, len({a: 1, b: 2})


@snippet("SET_ADD", [_same_then_distinct] * 3, "captured", compiles=2)
def set_add_one_tensor_twice(a, b):
    return a * 1, len({t for t in (a, b)})


@snippet("STORE_SUBSCR", [_same_then_distinct] * 3, "captured", compiles=2)
def store_subscr_tensor_keys(a, b):
    d = {}
    d[a] = 1
    d[b] = 2
    return a * 1, len(d), d[a]


@snippet(("BUILD_LIST", "BUILD_TUPLE", "RETURN_VALUE"), [lambda c: (T([1.0]), [T([2.0])], {"k": 1})] * 2, "captured")
def return_arguments_and_containers_holding_them(x, l, d):
    y = x * 2
    return x, l, d, [x, l], (y, y), {"l": l}, l[0]


@snippet("RETURN_VALUE", [lambda c: ([T([1.0]), T([2.0])],)] * 2, "captured")
def return_items_of_argument_list(l):
    return l[1], l[0], l[0] + l[1]


def _shared_or_not(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    a = Box(1)
    return (T([1.0]), a, a if n % 2 == 0 else Box(1))


@snippet("IS_OP|COMPARE_OP", [_shared_or_not] * 3, "captured", compiles=3)
def is_between_arguments(x, a, b):
    if a is b:
        return x * 2
    return x * 3


def _same_list_or_not(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    l = [1, 2]
    return (T([1.0]), l, l if n % 2 == 0 else [1, 2])


@snippet("IS_OP|COMPARE_OP", [_same_list_or_not] * 3, "captured", compiles=2)
def is_between_list_arguments(x, a, b):
    return x, a is b, a == b


def _grow_dict(c):
    d = c.setdefault("d", {"a": 1.0})
    d["k%d" % len(d)] = float(len(d))
    return (T([1.0]), d)


@snippet(("GET_ITER", "FOR_ITER"), [_grow_dict] * 3, "captured", compiles=3)
def for_iter_dict_argument_grows(x, d):
    for k in d:
        x = x + d[k]
    return x, len(d)


@snippet("CALL_FUNCTION", [_grow_list] * 3, "captured", compiles=3)
def len_of_growing_argument(l, x):
    return x * len(l)


def _set_arg(c):
    s = c.setdefault("s", {1, 2})
    if c.get("called"):
        s.add(len(s) + 5)
    c["called"] = True
    return (T([1.0]), s)


@snippet(("CONTAINS_OP|COMPARE_OP",), [_set_arg] * 3, "captured", compiles=3)
def contains_in_growing_set_argument(x, s):
    return x * len(s), 7 in s, 8 in s


@snippet("CALL_FUNCTION_EX", [args(v3, const({1: 2}))] * 2, "B007")
def call_function_ex_non_string_keyword_to_varkw(x, kw):
    return star_all(x, **kw)


def _mutate_dict_key(c):
    d = c.setdefault("d", {"a": 1.0})
    n = c.get("n", 0)
    c["n"] = n + 1
    if n == 1:
        d["k"] = 5.0
    if n == 2:
        d["k"] = 7.0
    return (T([1.0]), d)


@snippet(("LOAD_METHOD", "CALL_METHOD"), [_mutate_dict_key] * 3, "captured", compiles=3)
def readonly_methods_of_argument_dict(x, d):
    return x * d.get("k", 2.0), list(d.items()), "k" in d.keys()


def _mutate_list_items(c):
    l = c.setdefault("l", [1, 2, 3])
    n = c.get("n", 0)
    c["n"] = n + 1
    if n == 1:
        l.append(3)
    if n == 2:
        l[0] = 3
    return (T([1.0]), l)


@snippet(("LOAD_METHOD", "CALL_METHOD"), [_mutate_list_items] * 3, "captured", compiles=3)
def readonly_methods_of_argument_list(x, l):
    return x * l.count(3), l.index(3), sorted(l), l + [0], l[:]


# =============================================================================================
# Guards on what LOAD_GLOBAL / LOAD_ATTR read, changed between calls
# =============================================================================================

def _shadow_builtin(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    if n == 1:
        globals()["abs"] = lambda v: v * 10
    if n == 2:
        del globals()["abs"]
    return (T([-1.0, 2.0]),)


@snippet("LOAD_GLOBAL", [_shadow_builtin] * 3, "captured", globals_={"abs": ABSENT}, compiles=2)
def load_global_builtin_shadowed_between_calls(x):
    return abs(x)


def _class_attr_changes(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    k = globals()["G_KLASS"]
    if n == 1:
        k.factor = 3.0
    return (T([1.0, 2.0]), k())


@snippet("LOAD_ATTR", [_class_attr_changes] * 3, "captured",
         globals_={"G_KLASS": lambda: type("Klass", (object,), {"factor": 2.0})}, compiles=2)
def load_attr_class_attribute_changes(x, obj):
    return x * obj.factor


def _global_box_changes(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    if n == 1:
        globals()["G_BOX"].v = T([5.0])
    if n == 2:
        globals()["G_BOX"].v = 4.0
    return (T([1.0, 2.0]),)


@snippet("LOAD_ATTR", [_global_box_changes] * 3, "captured", globals_={"G_BOX": lambda: Box(2.0)}, compiles=3)
def load_attr_of_global_instance_changes(x):
    return x * G_BOX.v  # noqa: F821


def _global_list_grows(c):
    globals()["G_LIST"].append(T([float(len(globals()["G_LIST"]))]))
    return (T([1.0]),)


@snippet(("LOAD_GLOBAL", "BINARY_SUBSCR", "BUILD_SLICE"), [_global_list_grows] * 3, "captured",
         globals_={"G_LIST": lambda: [T([9.0])]}, compiles=3)
def global_list_grows_between_calls(x):
    return x + G_LIST[-1], len(G_LIST), G_LIST[1:]  # noqa: F821


# =============================================================================================
# Root frames with cells over arguments, keyword-only and variadic parameters
# =============================================================================================

@snippet(("LOAD_CLOSURE", "LOAD_DEREF", "STORE_DEREF"), TENSOR_CALLS, "captured", compiles=2)
def closure_over_argument(x):
    def scaled(k):
        return x * k

    def rebind():
        nonlocal x
        x = x + 1
    first = scaled(2.0)
    rebind()
    return first, scaled(2.0), x


@snippet(("LOAD_FAST", "FOR_ITER"),
         [lambda c: Kw((T([1.0]),), {}), lambda c: Kw((T([1.0]),), {"k": 3.0}),
          lambda c: Kw((T([1.0]), T([2.0])), {"k": 3.0, "extra": "e"}), lambda c: Kw((T([1.0]),), {"k": 3.0})],
         "captured", compiles=3)
def root_variadic_and_keyword_only(x, *rest, k=2.0, **kw):
    y = x * k
    for r in rest:
        y = y + r
    return y, len(rest), sorted(kw)


@snippet("RETURN_VALUE", [lambda c: Kw((T([1.0]),), {"nope": 1})], "never")
def root_bad_keyword_argument(x):
    return x


# =============================================================================================
# Truth tests (POP_JUMP_IF_*, JUMP_IF_*_OR_POP, UNARY_NOT) on containers and objects that change
# between calls; iteration helpers over arguments that change between calls
# =============================================================================================

def _list_emptied(c):
    l = c.setdefault("l", [T([4.0])])
    n = c.get("n", 0)
    c["n"] = n + 1
    if n == 1:
        l.clear()
    if n == 2:
        l.append(T([6.0]))
    return (T([1.0]), l)


@snippet(("JUMP_IF_TRUE_OR_POP", "UNARY_NOT", "POP_JUMP_IF_FALSE|POP_JUMP_IF_TRUE"), [_list_emptied] * 3,
         "captured", compiles=2)
def truth_of_list_argument_changes(x, l):
    first = (l or [x])[0]
    empty = not l
    if l:
        return first * 2, empty
    return first * 3, empty


def _klass_grows_bool(c):
    n = c.get("n", 0)
    c["n"] = n + 1
    k = globals()["G_KLASS"]
    if n == 1:
        k.__bool__ = lambda self: False
    return (T([1.0]), k())


@snippet("POP_JUMP_IF_FALSE|POP_JUMP_IF_TRUE", [_klass_grows_bool] * 3, "captured",
         globals_={"G_KLASS": lambda: type("Klass", (object,), {})}, compiles=2)
def truth_of_instance_whose_class_gains_bool(x, obj):  # the new __bool__ is inlined, after a recompile
    if obj:
        return x * 2
    return x * 3


@snippet(("GET_ITER", "FOR_ITER"), [_grow_list] * 3, "captured", compiles=3)
def iteration_helpers_over_growing_list(l, x):
    out = []
    for a, b in zip(l, reversed(l)):
        out.append(a - b)
    for i in range(len(l)):
        x = x + l[i]
    return out, x, [t * 2 for t in l[::-1]]


# =============================================================================================
# Guards on what LOAD_FAST reads: constants of another type or sign, tensors of another dtype
# =============================================================================================

@snippet(("FORMAT_VALUE", "BINARY_TRUE_DIVIDE"),
         [args(v3, const(1)), args(v3, const(1.0)), args(v3, const(True)), args(v3, const(-0.0)),
          args(v3, const(0.0)), args(v3, const(1))], "captured", compiles=5)
def constants_of_another_type_or_sign(x, n):
    return x * n, f"{n}", (1 / n if n else str(n)), [n]


@snippet(("BINARY_MULTIPLY", "BINARY_FLOOR_DIVIDE", "BINARY_MODULO"),
         [i3, i3, v3, lambda c: (T([3, 0, -2]),), lambda c: (T([3, 0, -2], dtype=pj.int32),)], "captured", compiles=3)
def tensors_of_another_dtype(x):
    return x * 2, x // (x - x + 2), x % 3, (x + 1) // x


@snippet("BINARY_FLOOR_DIVIDE", [args(i3, lambda c: (T([1, 2, 3]),)), args(i3, lambda c: (T([1, 0, 3]),))],
         "captured")
def int_tensor_division_by_zero_data(a, b):
    c = a + 1
    return c // b, c % b


# =============================================================================================
# What MAKE_FUNCTION and STORE_DEREF leave behind
# =============================================================================================

@snippet("MAKE_FUNCTION", TENSOR_CALLS, "captured", compiles=2)
def make_function_annotations_read_back(x):
    def g(a: int, b: "s" = 2) -> str:
        return a
    return x * len(g.__annotations__), sorted(g.__annotations__), g.__defaults__, g.__qualname__


def _make_nested_nonlocal():
    scale = 2.0

    def root(x):
        def bump():
            nonlocal scale
            scale = scale + 1.0
        bump()
        return x * scale

    def get():
        return scale
    root.get = get
    return root


register(_make_nested_nonlocal(), ("LOAD_CLOSURE", "STORE_DEREF"),
         [lambda c: (T([1.0]),)] * 3, "B005", factory=_make_nested_nonlocal,
         name="inner_function_assigns_enclosing_free_variable")


@snippet(("BINARY_SUBSCR", "BUILD_TUPLE"), [m22, m22, lambda c: (T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)],
         "captured", compiles=2)
def binary_subscr_tensor_index_forms(m):
    return m[..., 0], m[None], m[:, None, 1], m[-1, ::-1], m[1:, :1]


@snippet("BINARY_SUBSCR", [m22, m22], ("B017", "captured"))
def binary_subscr_tensor_by_tensor(m):
    return m[T([1, 0])], m[m > 0]


@snippet("STORE_SUBSCR", TENSOR_CALLS, "captured", compiles=2)
def store_subscr_slices_of_local_list(x):
    l = [x, x * 2, x * 3]
    l[0:1] = [x - 1, x - 2]
    l[::2] = [0, 1]
    return l


@snippet("STORE_SUBSCR", [v3], "B007")
def store_subscr_extended_slice_wrong_length(x):
    l = [x, x, x]
    l[::2] = [1]
    return l


class WithProperty(object):
    def __init__(self, v):
        self._v = v

    @property
    def v(self):
        return self._v * 2

    @property
    def logged(self):
        LOG.append("logged")
        return self._v


@snippet("LOAD_ATTR", [lambda c: (T([1.0]), WithProperty(T([3.0]))), lambda c: (T([1.0]), WithProperty(T([5.0]))),
                       lambda c: (T([1.0]), WithProperty(4.0))], "captured", compiles=2)
def load_attr_user_property(x, obj):
    return x + obj.v


@snippet("LOAD_ATTR", [lambda c: (T([1.0]), WithProperty(T([3.0])))] * 2, "captured")  # the getter's append replayed
def load_attr_user_property_with_side_effect(x, obj):
    return x + obj.logged


@snippet("CALL_FUNCTION", [lambda c: (T([1.0]), Box(2.0)), lambda c: (T([1.0]), Slotted(3.0)),
                           lambda c: (T([1.0]), Box(2.0))], "captured", compiles=2)
def getattr_with_default(x, obj):
    return x * getattr(obj, "v", 0.0), getattr(obj, "w", "none"), hasattr(obj, "v")


# =============================================================================================
# 3.10's structural pattern matching (generated source: `match` does not parse before 3.10).
# Simulated: sequence patterns (the subject's class flags, len), mapping patterns on dicts (keys
# guarded present or absent, **rest), class patterns (isinstance, __match_args__, attributes as
# getattr reads them). A sequence or mapping pattern on an instance of a user class refuses (B001):
# the class's pattern flags may change.
# =============================================================================================

if "MATCH_SEQUENCE" in OPCODES:
    register(generated("def match_sequence(x, p):\n"
                       "    match p:\n"
                       "        case [a, b]:\n"
                       "            return x * a + b\n"
                       "        case (a, b, c):\n"
                       "            return x * c\n"
                       "        case _:\n"
                       "            return x\n", "match_sequence"),
             ("MATCH_SEQUENCE", "GET_LEN"),
             [lambda c: (T([1.0, 2.0]), [2.0, 3.0]), lambda c: (T([1.0, 2.0]), (4.0, 5.0)),
              lambda c: (T([1.0, 2.0]), [1.0, 2.0, 3.0]), lambda c: (T([1.0, 2.0]), 7.0),
              lambda c: (T([1.0, 2.0]), "ab"), lambda c: (T([1.0, 2.0]), [2.0, 3.0])], "captured")
    class SeqOfMine(list):  # a class: its flags may change (collections.abc registration)
        pass

    register(generated("def match_sequence_of_a_class(x, p):\n"
                       "    match p:\n"
                       "        case [a, b]:\n"
                       "            return x * a + b\n"
                       "        case _:\n"
                       "            return x\n", "match_sequence_of_a_class"),
             ("MATCH_SEQUENCE",), [lambda c: (T([1.0]), SeqOfMine([2.0, 3.0]))] * 2, "B001")
    register(generated("def match_mapping(x, p):\n"
                       "    match p:\n"
                       "        case {'k': v, 'j': w}:\n"
                       "            return x * v + w\n"
                       "        case _:\n"
                       "            return x\n", "match_mapping"),
             ("MATCH_MAPPING", "MATCH_KEYS", "ROT_N"),
             [lambda c: (T([1.0]), {"k": 2.0, "j": 3.0}), lambda c: (T([1.0]), {"k": 2.0}),
              lambda c: (T([1.0]), {"k": 2.0, "i": 3.0}), lambda c: (T([1.0]), {"k": T([2.0]), "j": 3.0, "z": 0}),
              lambda c: (T([1.0]), {"k": 2.0, "j": 3.0})], "captured", compiles=4)
    register(generated("def match_mapping_rest(x, p):\n"
                       "    match p:\n"
                       "        case {'k': v, **rest}:\n"
                       "            return x * v, sorted(rest)\n"
                       "        case _:\n"
                       "            return x, []\n", "match_mapping_rest"),
             ("COPY_DICT_WITHOUT_KEYS",),
             [lambda c: (T([1.0]), {"k": 2.0, "j": 3.0}), lambda c: (T([1.0]), {"j": 2.0}),
              lambda c: (T([1.0]), {"k": T([3.0]), "a": 1, "b": [2]}), lambda c: (T([1.0]), {"k": 2.0, "j": 3.0})],
             "captured")
    class Keys(object):
        A = "k"
        B = "k"

    register(generated("def match_mapping_duplicate_key(x, p):\n"
                       "    match p:\n"
                       "        case {Keys.A: v, Keys.B: w}:\n"
                       "            return x * v\n"
                       "    return x\n", "match_mapping_duplicate_key"),
             ("MATCH_KEYS",), [lambda c: (T([1.0]), {"k": 2.0, "j": 1.0})] * 2, "B007")
    class MapOfMine(dict):
        def get(self, key, default=None):
            return 10.0

    register(generated("def match_mapping_of_a_class(x, p):\n"
                       "    match p:\n"
                       "        case {'k': v}:\n"
                       "            return x * v\n"
                       "    return x\n", "match_mapping_of_a_class"),
             ("MATCH_KEYS",), [lambda c: (T([1.0]), MapOfMine(k=2.0))] * 2, "B001")
    register(generated("def match_class(x, p):\n"
                       "    match p:\n"
                       "        case Box(v=v):\n"
                       "            return x * v\n"
                       "        case _:\n"
                       "            return x\n", "match_class"),
             ("MATCH_CLASS",), [lambda c: (T([1.0]), Box(2.0)), lambda c: (T([1.0]), 3.0),
                                lambda c: (T([1.0]), Box(T([2.0]))), lambda c: (T([1.0]), Slotted(3.0))],
             "captured")

    class Point(object):
        __match_args__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    class Point3(Point):
        __match_args__ = ("x", "y", "z")

        def __init__(self, x, y, z=None):
            Point.__init__(self, x, y)
            if z is not None:
                self.z = z

    register(generated("def match_class_positional(x, p):\n"
                       "    match p:\n"
                       "        case Point3(a, b, c):\n"
                       "            return x * a + b * c\n"
                       "        case Point(a, y=b):\n"
                       "            return x * a - b\n"
                       "        case int(n) | float(n):\n"
                       "            return x + n\n"
                       "        case str() as s:\n"
                       "            return x * len(s)\n"
                       "    return x\n", "match_class_positional"),
             ("MATCH_CLASS",), [lambda c: (T([1.0]), Point(2.0, 3.0)), lambda c: (T([1.0]), Point3(2.0, 3.0, 4.0)),
                                lambda c: (T([1.0]), Point3(2.0, 3.0)), lambda c: (T([1.0]), 5),
                                lambda c: (T([1.0]), 2.5), lambda c: (T([1.0]), "abc"), lambda c: (T([1.0]), None),
                                lambda c: (T([1.0]), Point(T([2.0]), 3.0))], "captured")
    register(generated("def match_class_too_many_positional(x, p):\n"
                       "    match p:\n"
                       "        case Point(a, b, c):\n"
                       "            return x * a\n"
                       "    return x\n", "match_class_too_many_positional"),
             ("MATCH_CLASS",), [lambda c: (T([1.0]), Point(2.0, 3.0))] * 2, "B007")


if "CHECK_EG_MATCH" in OPCODES:  # except* (3.11): a group's handlers
    register(generated(EXCEPT_STAR_SRC, "except_star_splits_a_group"), ("CHECK_EG_MATCH", "PREP_RERAISE_STAR"),
             [lambda c: (T([1.0]), ExceptionGroup("g", [ValueError("v"), KeyError("k")])),  # noqa: F821 (3.11)
              lambda c: (T([2.0]), ExceptionGroup("g", [KeyError("k")]))],  # noqa: F821
             ("captured", "B007"))  # (the raise breaks: the resume function's copy of the table reaches the handlers)
