"""Random programs for the differential fuzzer (tests/fuzz/run_fuzz.py): plain Python vs pj.jit.

generate(seed) -> the source of one module, deterministic in `seed` (the same text on every run
and every supported Python). The module always has this shape:

    import pijit as pj; from pijit import ops, nn; import math; ...
    class MyD(dict), class MyL(list), P = namedtuple('P', 'a b')   # argument types
    G_* = ...                       # globals: scalars, a tensor, a list, a dict, an OrderedDict
                                    #   (G_OD), a set, counters
    class E / risky / careful / ...  # optional (env.fx, gen_features.py): exceptions (E, E2, EK,
                                    #   risky/careful/finisher, G_MODE/G_ZERO/G_KEY/G_STR),
                                    #   generators (gnum, gten, gfin, graise, gfrom, gret/gdeleg,
                                    #   gstop, gcount, gglob, drain), context managers (Mgr, cm,
                                    #   cmf, M_G, G_CLOG), a class with operators (V, VS, U0)
    class Pt / Sub / Sl / DC / Fn / W / Rf  # optional (env.objs): user classes whose instances
                                    #   the function makes (Program.objects_prelude): Pt with a
                                    #   random __init__, methods, properties, static/class methods;
                                    #   Sub(Pt) (super().__init__), Sl (__slots__), DC (dataclass),
                                    #   Fn (__call__), W (dunders capture must never run), Rf (a
                                    #   class capture refuses); make_pt/use_obj/link/each helpers;
                                    #   HOLD, G_OBJ, G_OBJS (outside places for them)
    def _poke(v): ...               # the caller writing into what a call returned
    class MyT(pj.Tensor): ...       # optional: a Tensor subclass overriding __add__ and sum
    class Count / class Box: ...    # optional: a user class (attributes, methods, a property,
                                    #   a counting descriptor, __eq__), BOX = Box(...)
    class Net(nn.Cell): ...         # optional: a Cell with a Parameter and attributes, Net2
                                    #   (another construct), SEQ / CLIST (a SequentialCell and
                                    #   a CellList of them)
    def _mk(k): ... CL, CL_SET = _mk(...)   # optional: closures and their setter (nonlocal)
    def _mkl(*v): ... CLL, CLL_ITEMS = _mkl(...)  # optional: a closure folding over a list
                                    #   it holds (drive() sorts, reverses, splices it)
    def helper(a, b=.., *rest, **kw): ...   # optional: a helper with defaults / varargs
    def rec(t, n): ...              # optional: a recursive helper
    def f(...): ...                 # the function under test (or Model.construct / Box.run)
    TARGET = f                      # what the harness calls (f, MODEL or BOX.run)
    def drive(call):                # R = call(*args) several times, mutating between calls:
        ...                         #   shapes, dtypes, globals, attributes, cells, arguments,
                                    #   patched methods, rebound objects, _poke(R), changes of
                                    #   order only (Program.order_mutations); last, sometimes
                                    #   pj.grad(lambda x: _tsum(call(x, ...)))(X)

In programs with user classes (OBJ_PROGRAM_P of them) the bodies also make instances and use
them (Body.s_obj: attributes read, written and deleted, methods, properties, getattr/setattr/
hasattr, lists and generators over them, nesting, closures over them, stores to globals, HOLD,
G_OBJS and the caller's containers, changes after they escaped, graph breaks while they are
live), the function returns them (alone, beside its result, twice, nested), and drive() changes
their classes between calls (Program.obj_mutations). All of that is drawn from a random stream
of its own (Program.ro), so a program without them is exactly the program the generator made
before they existed, and generate(seed, ("objects",)) leaves them out.

The same holds for the features of gen_features.py (exceptions, generators, context managers,
user-class operators; EXC_PROGRAM_P, GEN_PROGRAM_P, CTX_PROGRAM_P, DUN_PROGRAM_P of the programs,
each from its own stream): module-level code, statements before the body's statements, V passed
in as f's keyword-only u, and changes between calls (which branch raises, dunders replaced).

Half of the programs are "pure" (nothing changes outside the function but closure cells), so
that pijit captures them whole; the others exercise side effects, which pijit hands back to the
interpreter today. generate(seed, disabled) leaves out features (FEATURES) to look past a known
defect that would otherwise be every program's first difference.

The harness execs the module twice into fresh dicts and runs drive(call) once with TARGET and
once with pj.jit(TARGET), snapshotting results, exceptions and state after every call.

Bodies are typed: every expression is generated for a kind (tensor, number, int, bool, list of
tensors, list of numbers, dict, ...) from variables in scope of that kind, so most programs run
to the end in plain Python; some raise on purpose (shape mismatches, missing keys, explicit
raises, ZeroDivisionError), which the jitted program must raise identically.
"""
import random

import gen_features

SHAPES = [(3,), (3,), (2, 3), (2,), (1,), (4,), (2, 2), (1, 3), (3, 1), ()]
FLOAT_VALUES = ["1.0", "2.0", "-1.5", "0.5", "3.0", "-2.0", "0.25", "-0.0", "0.0", "4.0"]
FLOAT_SPECIAL = ["float('nan')", "float('inf')", "-0.0", "1e-3", "-1e30", "0.1", "1 / 3",
                 "3.3", "1e-45", "2.7182818284590452", "1e39"]
INT_VALUES = ["0", "1", "2", "3", "-1", "-2", "5"]
INT_SPECIAL = ["2 ** 40", "10 ** 20", "-2 ** 63", "2 ** 31 - 1", "-7"]
OBJ_PROGRAM_P = 0.2      # programs with user classes made inside the function (Program.objects_prelude)
OBJ_STMT_P = 0.25        # chance of an object statement before each statement of such programs
# Shares of programs with each feature of gen_features.py (run_fuzz.py --exceptions P etc.);
# each is drawn from a stream of its own, so a program without it is unchanged by its existence.
EXC_PROGRAM_P = 0.15     # raises, try/except/else/finally, assert, exceptions escaping
GEN_PROGRAM_P = 0.15     # generator functions and expressions, consumed every way
CTX_PROGRAM_P = 0.12     # with: user managers, contextlib, suppression, early exits
DUN_PROGRAM_P = 0.12     # a user class's operators and protocols (V, VS), V passed in as u
FEATURE_P = {"exceptions": "EXC_PROGRAM_P", "generators": "GEN_PROGRAM_P",
             "contexts": "CTX_PROGRAM_P", "dunders": "DUN_PROGRAM_P"}
OBJ_KINDS = ("OP", "OS", "OC", "OF", "OW", "OR", "LO")   # Pt/Sub, Sl, DC, Fn, W, Rf, a list of Pt
T_UNARY_OPS = ["relu", "abs", "sigmoid", "tanh", "square", "sin", "neg", "exp"]
T_UNARY_METHODS = ["relu", "abs", "sigmoid", "tanh", "square", "neg", "float"]
T_BINARY_OPS = ["maximum", "minimum", "add", "mul", "sub"]


class Var(object):
    __slots__ = ("name", "kind")

    def __init__(self, name, kind):
        self.name = name
        self.kind = kind


class Env(object):
    """What the module around the body provides (names of globals and helpers by kind)."""

    def __init__(self):
        self.globals = {}          # name -> kind (module globals readable by bodies)
        self.box = False           # class Box / instance BOX
        self.net = False           # class Net / instance NET
        self.ctx = False           # class Ctx / instance CTX (a context manager logging to G_LOG)
        self.closure = False       # CL(t) -> tensor, CL_SET(v)
        self.closure2 = False      # CL2, CL2_SET: a second closure from the same factory
        self.subclass = False      # class MyT(pj.Tensor) with overridden __add__ and sum
        self.rec = False           # rec(t, n): a recursive helper
        self.helper = False        # helper(a, b=..., *rest, **kw)
        self.seq = False           # SEQ (nn.SequentialCell) and CLIST (nn.CellList) of Nets
        self.cll = False           # CLL(t) folds over CLL_ITEMS, a list held by its closure
        self.objs = False          # user classes whose instances the function makes (Pt, ...)
        self.oc = {}               # their shapes (OBJ_CLASSES): which classes, which variants
        self.ro = None             # the random stream of everything about them (see Program)
        self.fx = set()            # the features of gen_features.py the program has
        self.fr = {}               # their random streams (one each)
        self.fxv = {}              # their variants (which __enter__, which __bool__, ...)
        # A pure program changes nothing outside the function it runs in (pijit captures those
        # whole today; side effects break the frame back to the interpreter), except closure
        # cells; the others exercise side effects and fallbacks.
        self.pure = False


class Body(gen_features.FeatureStatements):
    """Generates one function body (a list of lines) for a set of typed parameters."""

    def __init__(self, rng, env, params, indent="    ", budget=9, in_method=None,
                 allow_nested=True):
        self.r = rng
        self.env = env
        self.scopes = [list(params)]
        self.lines = []
        self.indent = indent
        self.budget = budget          # statements left (all nesting levels together)
        self.counter = 0
        self.globals_written = set()
        self.in_method = in_method    # 'BOX' / 'NET' when self is that object
        self.allow_nested = allow_nested
        self.loop_depth = 0
        self.frozen = set()           # lists being iterated: never grown inside the loop
        self.owned = set()            # containers this body created (may change them when pure)
        self.finally_base = -1        # loop depth where the innermost finally clause began
        self.top_objs = []            # objects bound at the top level (for the last return)
        self.returns_objs = False     # the function under test: its returns may carry objects

    # ---- scope ------------------------------------------------------------------------------
    def vars(self, kind):
        out = []
        for sc in self.scopes:
            out.extend(v.name for v in sc if v.kind == kind)
        return out

    def targets(self, kind):
        """Variables of `kind` that can be assigned to (not expressions such as self.inner(x))."""
        return [v for v in self.vars(kind) if "(" not in v]

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def bind(self, name, kind):
        self.scopes[-1].append(Var(name, kind))

    def emit(self, depth, text):
        first, _, rest = text.partition("\n")
        self.lines.append(self.indent + "    " * depth + first)
        if rest:            # continuation lines are written relative to the body's indent
            self.lines.append("    " * depth + rest)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    # ---- literals ---------------------------------------------------------------------------
    def lit_float(self):
        return self.pick(FLOAT_SPECIAL) if self.chance(0.08) else self.pick(FLOAT_VALUES)

    def lit_num(self):
        c = self.r.random()
        if c < 0.5:
            return self.lit_float()
        if c < 0.9:
            return self.pick(INT_SPECIAL) if self.chance(0.05) else self.pick(INT_VALUES)
        return self.pick(["True", "False"])

    # ---- expressions by kind ----------------------------------------------------------------
    def expr(self, kind, d=2):
        return getattr(self, "e_" + kind)(d)

    def e_T(self, d):
        leaves = self.vars("T")
        if d <= 0 or self.chance(0.25):
            return self.t_leaf()
        c = self.r.random()
        a = self.e_T(d - 1)
        if c < 0.22:
            return "(%s %s %s)" % (a, self.pick("++--**/"), self.e_T(d - 1))
        if c < 0.36:
            n = self.e_N(d - 1)
            op = self.pick("+-*/")
            return "(%s %s %s)" % ((a, op, n) if self.chance(0.6) else (n, op, a))
        if c < 0.44:
            return "ops.%s(%s)" % (self.pick(T_UNARY_OPS), a)
        if c < 0.50:
            return "%s.%s()" % (a, self.pick(T_UNARY_METHODS))
        if c < 0.55:
            return "ops.%s(%s, %s)" % (self.pick(T_BINARY_OPS), a, self.e_T(d - 1))
        if c < 0.58:
            return "ops.where(%s > %s, %s, %s)" % (a, self.lit_float(), self.e_T(d - 1),
                                                   self.e_T(d - 1))
        if c < 0.61:
            return "ops.clamp(%s, %s, %s)" % (a, self.pick(["-1.0", "0.0", "-0.5"]),
                                              self.pick(["1.0", "2.0", "0.5"]))
        if c < 0.69:
            return self.pick(["%s.sum()", "%s.mean()", "%s.max()", "%s.min()", "ops.sum(%s)",
                              "%s.sum(axis=-1)", "%s.sum(0, keepdims=True)",
                              "%s.mean(axis=0)", "ops.mean(%s)", "%s.prod()", "%s.var()",
                              "%s.std()", "ops.softmax(%s)", "ops.log_softmax(%s)",
                              "ops.logsumexp(%s, -1)", "%s.cumsum(0)", "ops.amax(%s)",
                              "ops.matmul(%s.reshape(-1, 1), %s.reshape(1, -1))",
                              "(%s // 2)", "(%s %% -3)", "(%s ** 0.5)", "(%s ** 2)",
                              "%s.argmax()", "ops.erf(%s)", "ops.log1p(%s)",
                              "ops.expm1(%s)", "ops.floor(%s)", "ops.round(%s)",
                              "ops.reciprocal(%s)", "ops.rsqrt(%s)", "ops.sign(%s)",
                              "ops.gelu(%s)", "ops.gelu(%s, 'tanh')", "(%s * 1.0 - 0.0)",
                              "(%s + 0.0)", "ops.dense(%s.reshape(1, -1), %s.reshape(1, -1) * 2.0)",
                              # casts a fused loop converts on load; reductions it does as it computes
                              "(%s.astype(pj.float64).astype(pj.float32) * 0.5)",
                              "((%s * 3.0).astype(pj.int32).astype(pj.float32) - 1.0)",
                              "(ops.tile(%s.reshape(-1), (40,)) * 1.5).sum()",
                              "ops.tanh(ops.tile(%s.reshape(1, -1), (3, 40)) + 0.5).max(axis=-1)",
                              "(ops.tile(%s.reshape(1, -1), (2, 33)) - 0.25).mean(axis=-1, keepdims=True)"]
                             ).replace("%s", a).replace("%%", "%")
        if c < 0.76:
            return self.pick(["%s[0]", "%s[-1]", "%s[1:]", "%s[::-1]", "%s[:-1]", "%s[..., 0]",
                              "%s[-1:]", "%s[None]", "%s[..., ::2]", "%s[pj.Tensor([0])]",
                              "%s[%s > 0]", "%s[-2:]"]).replace("%s", a)
        if c < 0.79:
            return self.pick(["%s.reshape(-1)", "%s.unsqueeze(0)", "%s.reshape(%s.shape)",
                              "ops.expand_dims(%s, 0)", "%s.T", "%s.flatten()", "%s.squeeze()",
                              "%s.transpose()", "ops.broadcast_to(%s, (2,) + %s.shape)",
                              "ops.tile(%s, (2,))", "%s.view(-1)"]).replace("%s", a)
        if c < 0.81:
            return self.pick(["%s.astype(pj.float32)", "ops.cast(%s, pj.float32)",
                              "pj.ones_like(%s)", "pj.zeros_like(%s)",
                              "pj.ones(%s.shape)", "pj.zeros(%s.shape[::-1])",
                              "pj.full(%s.shape, %s)" % ("%s", self.e_N(0)),
                              "pj.arange(%s.ndim + 1)", "(%s > 0) & (%s < 2)",
                              "(%s > 0) | (%s < -1)", "~(%s > 0)", "((%s > 0) == (%s < 1))",
                              "ops.where(%s > 0, %s, 0.0)", "ops.maximum(%s, 0)",
                              "%s.reshape(%s.shape[::-1])", "%s.reshape(tuple(%s.shape) + (1,))"]
                             ).replace("%s", a)
        if c < 0.90:
            call = self.t_call(a, d)
            if call:
                return call
        if c < 0.93 and self.vars("LT"):
            return "%s[%s]" % (self.pick(self.vars("LT")), self.pick(["0", "-1", "len(%s) - 1"
                                                                     % self.pick(self.vars("LT"))]))
        if c < 0.96:
            return "(%s if %s else %s)" % (a, self.e_B(d - 1), self.e_T(d - 1))
        if c < 0.98 and not self.loop_depth:     # (in a loop, sizes could double every turn)
            return self.pick(["ops.cat((%s, %s))", "ops.stack([%s, %s])"]) % (a, self.e_T(d - 1))
        if leaves and self.chance(0.5):
            return "sum([%s, %s])" % (a, self.e_T(d - 1))
        return a

    def t_leaf(self):
        leaves = self.vars("T")
        c = self.r.random()
        if leaves and c < 0.7:
            return self.pick(leaves)
        if c < 0.8 and "G_T" in self.env.globals:
            return "G_T"
        if c < 0.85 and self.env.net:
            return self.pick(["NET.p", "NET.p.sum()", "ops.exp(NET.p * 0.5)", "NET.p.T.reshape(NET.p.shape)"])
        if c < 0.87 and self.env.box:
            return "BOX.t"
        if c < 0.88 and self.in_method == "NET":
            return "self.p"
        if self.chance(0.5):
            return "pj.Tensor(%s)" % self.lit_float()
        return "pj.Tensor([%s])" % self.lit_float()

    def t_call(self, a, d):
        opts = []
        if self.env.box:
            opts += ["BOX.scale(%s)" % a, "BOX.pair(%s)[0]" % a]
            if self.in_method == "BOX":
                opts += ["self.scale(%s)" % a]
        if self.env.net and self.in_method != "NET":
            opts += ["NET(%s)" % a]
        if self.env.closure:
            opts += ["CL(%s)" % a]
            if self.env.closure2:
                opts += ["CL2(%s)" % a, "(CL(%s) + CL2(%s))" % (a, a)]
        if self.env.helper:
            opts += ["helper(%s)" % a, "helper(%s, %s)" % (a, self.e_N(d - 1)),
                     "helper(%s, c=%s)" % (a, self.lit_float()),
                     "helper(%s, %s, %s)" % (a, self.lit_float(), self.e_T(d - 1)),
                     "helper(*[%s, %s])" % (a, self.e_N(0)),
                     "helper(%s, **{'c': %s})" % (a, self.e_N(0)),
                     "helper(**dict(a=%s, b=%s))" % (a, self.e_N(0)),
                     "helper(%s, *(%s,), c=%s)" % (a, self.e_T(0), self.lit_float())]
            if self.chance(0.05):
                opts += ["helper(**{'a': %s}, **{'a': %s})" % (a, a)]
        if self.env.rec:
            opts += ["rec(%s, %s)" % (a, self.pick(["0", "1", "2", "min(%s, 3)" % self.e_I(0)]))]
        # Readers of order: what they return depends on the order of a list or an ordered
        # container that drive() reorders in place between calls (guards must notice).
        if self.env.box:
            opts += ["BOX.fold(%s)" % a]
        if self.env.cll:
            opts += ["CLL(%s)" % a]
        if self.env.seq and self.in_method != "NET":
            opts += ["SEQ(%s)" % a, "SEQ[0](%s)" % a, "SEQ[-1](%s)" % a, "CLIST[0](%s)" % a]
        fns = self.vars("FN")
        if fns:
            opts += ["%s(%s)" % (self.pick(fns), a)]
        return self.pick(opts) if opts else None

    def e_N(self, d):
        """A Python number (int, float or bool)."""
        nums = self.vars("N") + self.vars("I")
        c = self.r.random()
        if d <= 0 or c < 0.3:
            if nums and self.chance(0.6):
                return self.pick(nums)
            return self.n_leaf()
        if c < 0.5:
            return "(%s %s %s)" % (self.e_N(d - 1), self.pick("++--**/"), self.e_N(d - 1))
        if c < 0.55:
            return "(%s %s %s)" % (self.e_N(d - 1), self.pick(["//", "%", "**"]),
                                   self.pick(["2", "3", "-1", "2.0", "0.5"]))
        if c < 0.62:
            return self.pick(["abs(%s)", "-%s", "float(%s)", "round(%s, 1)", "round(%s)",
                              "math.copysign(1.0, %s)", "divmod(%s, 3)[0]", "int(%s)",
                              "bool(%s)", "float(%s) == 0.0", "math.floor(%s)"]
                             ) % self.e_N(d - 1)
        if c < 0.68:
            return "%s(%s, %s)" % (self.pick(["min", "max"]), self.e_N(d - 1), self.e_N(d - 1))
        if c < 0.76 and (not self.env.pure or self.chance(0.3)):
            t = self.e_T(d - 1)
            return self.pick(["float(%s.sum())", "%s.sum().item()", "int((%s > 0).sum())",
                              "float(%s.max())", "bool((%s > 0).any())"]) % t
        if c < 0.82:
            return self.e_I(d - 1)
        if c < 0.86:
            return "(%s if %s else %s)" % (self.e_N(d - 1), self.e_B(d - 1), self.e_N(d - 1))
        if c < 0.92 and self.vars("LN"):
            l = self.pick(self.vars("LN"))
            return self.pick(["sum(%s)" % l, "%s[-1]" % l, "%s[0]" % l, "len(%s)" % l,
                              "max(%s + [0])" % l, "sorted(%s + [1])[0]" % l,
                              "sum(e * 2 for e in %s)" % l, "%s[-2:][0]" % l,
                              "sorted(%s + [0], key=abs)[-1]" % l, "(%s + [7]).index(7)" % l,
                              "%s.count(1)" % l])
        if c < 0.94 and self.vars("LL"):
            ll = self.pick(self.vars("LL"))
            return self.pick(["len(%s[0])" % ll, "sum(len(r) for r in %s)" % ll,
                              "%s[-1][-1]" % ll])
        return self.n_leaf()

    def n_leaf(self):
        opts = [self.lit_num()] * 3
        for g, k in self.env.globals.items():
            if k in ("N", "I"):
                opts.append(g)
        if "G_D" in self.env.globals:
            opts += ["G_D.get('a', 0.0)", "G_D.get(%r, 1)" % self.pick(["b", "z"]),
                     "(list(G_D) + ['a']).index('a')", "next(iter(G_D.values()), 0.5)"]
        if "G_OD" in self.env.globals:
            opts += ["(list(G_OD.values()) + [0])[0]", "next(reversed(G_OD.values()), -1)",
                     "(list(G_OD) + ['b']).index('b')", "len(G_OD)", "G_OD.get('a', 0.25)",
                     "sum([v * (j + 1) for j, v in enumerate(G_OD.values())])"]
        if "G_L" in self.env.globals:
            opts += ["(G_L + [0])[0]", "(G_L + [0])[-2]" if self.chance(0.5) else "(G_L + [0])[1]"]
        if self.env.box:
            opts += ["BOX.w", "Box.k", "BOX.wk", "getattr(BOX, 'extra', 0.5)", "BOX.hits",
                     "BOX.vals[0]", "BOX.vals[-1]", "list(vars(BOX)).index('w')",
                     ] + ([] if "descriptor" in self.env.disabled else ["BOX.c", "Box.c"])
            if self.in_method == "BOX":
                opts += ["self.w", "self.hits", "self.wk"]
        if self.env.net:
            opts += ["NET.alpha"]
            if self.in_method == "NET":
                opts += ["self.alpha", "self.calls"]
        for dname in self.vars("D"):
            opts += ["%s.get(%r, -1.0)" % (dname, self.pick(["a", "b", "c"]))]
        for p in self.vars("NT"):
            opts += ["%s.a" % p, "%s[1]" % p, "%s[-1]" % p, "sum(%s)" % p, "len(%s)" % p,
                     "%s._replace(a=2).a" % p, "%s._asdict()['b']" % p]
        return self.pick(opts)

    def e_I(self, d):
        ints = self.vars("I")
        c = self.r.random()
        if ints and c < 0.35:
            return self.pick(ints)
        opts = [self.pick(INT_VALUES)]
        ts = self.vars("T")
        if ts:
            t = self.pick(ts)
            opts += ["%s.ndim" % t, "len(%s.shape)" % t, "%s.shape[-1]" % t, "len(%s)" % t,
                     "%s.size" % t]
        for kind in ("LT", "LN", "D", "TUP"):
            for v in self.vars(kind):
                opts.append("len(%s)" % v)
        if "G_N" in self.env.globals:
            opts.append("G_N")
        if "G_CNT" in self.env.globals:
            opts.append("G_CNT")
        if d > 0 and self.chance(0.2):
            return "(%s %s %s)" % (self.e_I(d - 1), self.pick("+-*"), self.e_I(d - 1))
        return self.pick(opts)

    def e_B(self, d):
        c = self.r.random()
        if d <= 0 or c < 0.45:
            return "(%s %s %s)" % (self.e_N(0), self.pick(["<", ">", "==", "!=", "<=", ">="]),
                                   self.e_N(0))
        if c < 0.55:
            pool = self.vars("N") + self.vars("T") + self.vars("LN") + ["1", "0.5"]
            if "G_S" in self.env.globals:
                pool.append("G_S")
            v = self.pick(pool)
            return self.pick(["isinstance(%s, float)", "isinstance(%s, int)",
                              "isinstance(%s, pj.Tensor)", "isinstance(%s, (list, tuple))",
                              "type(%s) is bool", "callable(%s)"]
                             + ([] if v[0].isdigit() else ["(%s is None)"])) % v
        if c < 0.58 and self.vars("T"):
            t = self.pick([v for v in self.vars("T")])
            return self.pick(["hasattr(%s, 'tag')" % t, "(getattr(%s, 'tag', 0) == 1)" % t,
                              "(0 < %s < 3)" % self.e_N(0),
                              "any(e > 0 for e in [%s, %s])" % (self.e_N(0), self.e_N(0))])
        if c < 0.62 and self.env.box:
            return self.pick(["hasattr(BOX, 'extra')", "isinstance(BOX, Box)",
                              "hasattr(Box, 'k')", "getattr(BOX, 'flag', False)",
                              "(BOX == BOX)", "(BOX in [1, BOX])", "([BOX] == [BOX])"])
        if c < 0.64 and self.vars("D"):
            return "isinstance(%s, %s)" % (self.pick(self.vars("D")),
                                           self.pick(["MyD", "dict", "OrderedDict"]))
        if c < 0.68 and "G_D" in self.env.globals:
            return "(%r in G_D)" % self.pick(["a", "b", "z"])
        if c < 0.72 and "G_SET" in self.env.globals:
            return "(%s in G_SET)" % self.pick(["1", "2", "3"])
        if c < 0.80:
            ts = self.vars("T")
            if ts:
                t = self.pick(ts)
                return self.pick(["(%s.ndim > 1)", "(%s.dtype == pj.float32)",
                                  "(%s.shape[-1] == 3)", "(%s.dtype == pj.bool_)",
                                  "(len(%s.shape) == 0)"]) % t
        if c < 0.84 and (not self.env.pure or self.chance(0.3)):
            return "bool((%s > %s).all())" % (self.e_T(d - 1), self.lit_float())
        if c < 0.90:
            return "(not %s)" % self.e_B(d - 1)
        if c < 0.95:
            return "(%s %s %s)" % (self.e_B(d - 1), self.pick(["and", "or"]), self.e_B(d - 1))
        if self.vars("LT") and self.chance(0.5):
            return "(%s in %s)" % (self.e_T(0), self.pick(self.vars("LT")))
        seqs = self.vars("LN") + self.vars("LT")
        if seqs:
            return "(len(%s) > %s)" % (self.pick(seqs), self.pick(["0", "1", "2"]))
        return self.pick(["True", "False"])

    def e_LN(self, d):
        lns = self.vars("LN") + (["G_L"] if "G_L" in self.env.globals else [])
        c = self.r.random()
        if lns and c < 0.4:
            l = self.pick(lns)
            return self.pick(["%s", "%s[1:]", "%s[::-1]", "list(%s)", "%s[:2]", "%s + [1]"]) % l
        if c < 0.7:
            return "[%s]" % ", ".join(self.e_N(0) for _ in range(self.r.randint(0, 3)))
        if lns:
            return "[e * 2 for e in %s if e != 0]" % self.pick(lns)
        return "[i * 0.5 for i in range(%s)]" % self.pick(["3", "2"])

    def e_LT(self, d):
        lts = self.vars("LT")
        if lts and self.chance(0.4):
            l = self.pick(lts)
            return self.pick(["%s", "%s[1:]", "%s[::-1]", "list(%s)", "%s[-2:]"]) % l
        if self.chance(0.4):
            return "[%s * _j for _j in range(%s)]" % (self.e_T(0), self.pick(["2", "3"]))
        return "[%s]" % ", ".join(self.e_T(d - 1) for _ in range(self.r.randint(1, 3)))

    def e_D(self, d):
        ordered = [g for g in ("G_D", "G_OD") if g in self.env.globals]
        if ordered and self.chance(0.2):
            return self.pick(["dict(%s)", "{k: v * 2 for k, v in %s.items()}",
                              "dict(zip(%s, range(9)))"]) % self.pick(ordered)
        if self.vars("D") and self.chance(0.4):
            return self.pick(["dict(%s)", "{**%s, 'b': 0.5}", "dict(sorted(%s.items()))"]) \
                % self.pick(self.vars("D"))
        keys = self.r.sample(["a", "b", "c"], self.r.randint(1, 3))
        return "{%s}" % ", ".join("%r: %s" % (k, self.e_N(0)) for k in keys)

    # ---- statements -------------------------------------------------------------------------
    def block(self, depth, n):
        """n statements at this depth, in a new scope (names bound inside do not leak)."""
        self.scopes.append([])
        start = len(self.lines)
        if depth == 0 and self.env.objs and self.env.ro.random() < 0.6:
            self.s_obj(depth)         # objects made at the top, where the return sees them
        if depth == 0 and len(self.scopes) == 2 and self.env.fx:
            self.feature_top(depth)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            if self.env.objs and self.env.ro.random() < OBJ_STMT_P:
                self.s_obj(depth)
            if self.env.fx:
                self.feature_stmts(depth)
            self.stmt(depth)
        if len(self.lines) == start:
            self.emit(depth, "pass")
        if len(self.scopes) == 2:     # the body's top level: its objects are live at the end
            self.top_objs = [v.name for v in self.scopes[-1] if v.kind in OBJ_KINDS]
        self.scopes.pop()

    def stmt(self, depth):
        c = self.r.random()
        nest_ok = depth < 3
        if c < 0.20:
            return self.s_assign(depth)
        if c < 0.27:
            return self.s_reassign(depth)
        if c < 0.37 and nest_ok:
            return self.s_if(depth)
        if c < 0.49 and nest_ok:
            return self.s_for(depth)
        if c < 0.53 and nest_ok:
            return self.s_while(depth)
        if c < 0.60:
            return self.s_container(depth)
        if c < 0.73:
            return self.s_side_effect(depth)
        if c < 0.80 and nest_ok:
            return self.s_try(depth)
        if c < 0.84:
            return self.s_unpack(depth)
        if c < 0.88 and self.allow_nested and depth < 2:
            return self.s_nested_def(depth)
        if c < 0.91 and (not self.env.pure or self.chance(0.3)):
            return self.s_raise(depth)
        if c < 0.94 and self.loop_depth and nest_ok:
            self.emit(depth, "if %s:" % self.e_B(1))
            self.emit(depth + 1, self.pick(["break", "continue"] if self.loop_depth >
                                           self.finally_base else ["break"]))
            return
        if c < 0.96 and nest_ok:
            self.emit(depth, "if %s:" % self.e_B(1))
            self.emit(depth + 1, "return %s" % self.obj_return(self.ret_expr()))
            return
        if c < 0.98 and nest_ok and self.env.ctx:
            return self.s_with(depth)
        return self.s_assign(depth)

    def s_with(self, depth):
        # A with-block: entered and left inside the graph, exceptions reach __exit__, and a
        # break inside re-enters it (CTX is read from the frame's globals).
        self.emit(depth, "with CTX:")
        self.block(depth + 1, self.r.randint(1, 3))

    def s_assign(self, depth):
        kind = self.pick(["T", "T", "T", "T", "N", "N", "I", "LN", "LT", "D"])
        name = self.fresh({"T": "t", "N": "n", "I": "i", "LN": "ln", "LT": "lt", "D": "d"}[kind])
        e = self.expr(kind)
        self.emit(depth, "%s = %s" % (name, e))
        self.bind(name, kind)
        if kind in ("LN", "LT", "D") and e.startswith(("[", "{", "dict(", "list(")):
            self.owned.add(name)

    def s_reassign(self, depth):
        kind = self.pick(["T", "T", "N", "I"])
        names = self.targets(kind)
        if not names:
            return self.s_assign(depth)
        name = self.pick(names)
        if self.chance(0.5):
            op = self.pick(["+=", "-=", "*="] if kind != "I" else ["+=", "-="])
            rhs = self.expr(kind if kind != "T" or self.chance(0.6) else "N")
            if kind == "I":
                rhs = self.e_I(1)
            if kind == "T" and self.env.pure and self.chance(0.8):
                # t += ... updates the tensor in place (pijit refuses that today)
                self.emit(depth, "%s = %s %s %s" % (name, name, op[0], rhs))
            else:
                self.emit(depth, "%s %s %s" % (name, op, rhs))
        else:
            self.emit(depth, "%s = %s" % (name, self.e_I(1) if kind == "I" else self.expr(kind)))

    def s_if(self, depth):
        cond = self.e_B(2) if self.chance(0.95 if self.env.pure else 0.85) else "%s" % self.pick(
            ["(%s > 0).any()", "%s.sum() > 1.0", "(%s != %s).all()"]).replace("%s", self.e_T(0))
        self.emit(depth, "if %s:" % cond)
        self.block(depth + 1, self.r.randint(1, 3))
        if self.chance(0.3):
            self.emit(depth, "elif %s:" % self.e_B(1))
            self.block(depth + 1, self.r.randint(1, 2))
        if self.chance(0.5):
            self.emit(depth, "else:")
            self.block(depth + 1, self.r.randint(1, 2))

    def s_for(self, depth):
        c = self.r.random()
        self.scopes.append([])
        if c < 0.3:
            i = self.fresh("k")
            n = self.pick(["2", "3", "len(%s)" % self.pick(self.vars("LN") + self.vars("LT"))
                           if self.vars("LN") + self.vars("LT") else "3",
                           "min(%s, 4)" % self.e_I(0)])
            self.emit(depth, "for %s in range(%s):" % (i, n))
            self.bind(i, "I")
        elif c < 0.5 and self.vars("LT"):
            e = self.fresh("e")
            self.emit(depth, "for %s in %s:" % (e, self.e_LT(0)))
            self.bind(e, "T")
        elif c < 0.6 and self.vars("LN"):
            e = self.fresh("e")
            self.emit(depth, "for %s in %s:" % (e, self.e_LN(0)))
            self.bind(e, "N")
        elif c < 0.7 and self.vars("LT"):
            i, e = self.fresh("k"), self.fresh("e")
            self.emit(depth, "for %s, %s in enumerate(%s):" % (i, e, self.pick(self.vars("LT"))))
            self.bind(i, "I")
            self.bind(e, "T")
        elif c < 0.75 and self.vars("LL"):
            row = self.fresh("row")
            self.emit(depth, "for %s in %s:" % (row, self.pick(self.vars("LL"))))
            self.bind(row, "LN")
        elif c < 0.8 and (self.vars("LN") or self.vars("LT")):
            a, b = self.fresh("e"), self.fresh("e")
            self.emit(depth, "for %s, %s in zip(%s, %s):" % (a, b, self.e_LT(0), self.e_LN(0)))
            self.bind(a, "T")
            self.bind(b, "N")
        elif c < 0.9 and (self.vars("D") or "G_D" in self.env.globals or
                          "G_OD" in self.env.globals):
            k, v = self.fresh("key"), self.fresh("v")
            dn = self.pick(self.vars("D") + [g for g in ("G_D", "G_OD", "G_OD")
                                             if g in self.env.globals])
            self.emit(depth, "for %s, %s in %s(%s.items()):"
                      % (k, v, self.pick(["", "sorted"]), dn))
            self.bind(v, "N")
        else:
            e = self.fresh("e")
            self.emit(depth, "for %s in (%s, %s):" % (e, self.e_T(0), self.e_T(1)))
            self.bind(e, "T")
        self.loop_depth += 1
        saved = set(self.frozen)
        self.frozen.update(self.vars("LT") + self.vars("LN") + self.vars("D") + self.vars("LL")
                           + ["G_L", "G_D"])
        self.block(depth + 1, self.r.randint(1, 3))
        self.frozen = saved
        self.loop_depth -= 1
        if self.chance(0.15):
            self.emit(depth, "else:")
            self.block(depth + 1, 1)
        self.scopes.pop()

    def s_while(self, depth):
        i = self.fresh("w")
        self.emit(depth, "%s = 0" % i)
        # The counter is not in scope inside the loop (nothing else may rebind it) and the bound
        # is capped, so the loop always ends.
        self.emit(depth, "while %s < %s:" % (i, self.pick(["2", "3", "min(%s, 4)" % self.e_I(0)])))
        self.scopes.append([])
        self.emit(depth + 1, "%s += 1" % i)
        self.loop_depth += 1
        self.block(depth + 1, self.r.randint(1, 2))
        self.loop_depth -= 1
        self.scopes.pop()
        self.bind(i, "I")

    def s_container(self, depth):
        c = self.r.random()
        if self.env.seq and self.in_method != "NET" and self.chance(0.3):
            # Cells applied in the containers' order (drive() reorders and replaces them).
            acc = self.fresh_bind("t", "T")
            self.emit(depth, "%s = %s" % (acc, self.e_T(0)))
            self.emit(depth, "for _c in %s:" % self.pick(["CLIST", "SEQ", "SEQ._cells.values()"]))
            self.emit(depth + 1, "%s = _c(%s) * %s" % (acc, acc, self.pick(["0.5", "2.0", "-1.0"])))
            return
        if c < 0.3:
            acc = self.fresh("acc")
            self.emit(depth, "%s = []" % acc)
            self.emit(depth, "for %s in range(%s):" % ("_q", self.pick(["2", "3"])))
            self.emit(depth + 1, "%s.append(%s)" % (acc, self.e_T(1)))
            self.bind(acc, "LT")
            self.owned.add(acc)
        elif c < 0.5:
            name = self.fresh("lt")
            src = self.pick(self.vars("LT")) if self.vars("LT") else "(%s, %s)" % (
                self.e_T(0), self.e_T(0))
            self.emit(depth, "%s = [%s for %s in %s%s]" % (
                name, self.pick(["_e * 2.0", "_e + 1", "ops.relu(_e)", "_e.sum()", "-_e"]),
                "_e", src, self.pick(["", "", " if _e.ndim > 0"])))
            self.bind(name, "LT")
            self.owned.add(name)
        elif c < 0.65:
            name = self.fresh("d")
            src = self.pick(self.vars("D") + (["G_D"] if "G_D" in self.env.globals else [])) \
                if self.vars("D") or "G_D" in self.env.globals else None
            if src:
                self.emit(depth, "%s = {k: v * 2 for k, v in %s.items()%s}" % (
                    name, src, self.pick(["", " if k != 'b'"])))
            else:
                self.emit(depth, "%s = dict(a=%s, b=%s)" % (name, self.e_N(0), self.e_N(0)))
            self.bind(name, "D")
            self.owned.add(name)
        elif c < 0.75:
            name = self.fresh("tp")
            self.emit(depth, "%s = (%s, %s)" % (name, self.e_T(1), self.e_T(0)))
            self.bind(name, "TUP")
            if self.chance(0.5):
                self.emit(depth, "%s = %s[%s]" % (self.fresh_bind("t", "T"), name,
                                                  self.pick(["0", "-1", "1"])))
        elif c < 0.8:
            name = self.fresh("fs")
            late = self.chance(0.5)
            self.emit(depth, "%s = [lambda t%s: t * _i for _i in range(%s)]" % (
                name, "" if late else ", _i=_i", self.pick(["2", "3"])))
            acc = self.fresh_bind("t", "T")
            self.emit(depth, "%s = %s" % (acc, self.e_T(0)))
            self.emit(depth, "for _g in %s:" % name)
            self.emit(depth + 1, "%s = %s + _g(%s)" % (acc, acc, self.e_T(0)))
        elif c < 0.85:
            name = self.fresh("s")
            self.emit(depth, "%s = {%s for e in %s}" % (
                name, self.pick(["e", "e % 3", "e * 0"]),
                self.pick(["range(%s)" % self.pick(["3", "4"]), "[1, 2, 2, True]", "(0, 1, 1)"])))
            self.emit(depth, "%s = %s" % (self.fresh_bind("i", "I"), self.pick(
                ["len(%s)" % name, "sum(%s)" % name, "(2 in %s) + 0" % name])))
        else:
            name = self.fresh("dt")
            self.emit(depth, "%s = {'p': %s, 'q': %s}" % (name, self.e_T(1), self.e_T(0)))
            self.emit(depth, "%s['r'] = %s['p'] * 2.0" % (name, name))
            self.bind(name, "DT")
            self.emit(depth, "%s = %s" % (self.fresh_bind("t", "T"), self.pick(
                ["%s['q']" % name, "sum(%s.values())" % name, "%s.get('r')" % name])))

    def fresh_bind(self, prefix, kind):
        name = self.fresh(prefix)
        self.bind(name, kind)
        return name

    def s_side_effect(self, depth):
        opts = []
        pure = self.env.pure
        mutable = lambda kind: [v for v in self.vars(kind) if v not in self.frozen and
                                (not pure or v in self.owned)]
        for l in mutable("LN"):
            opts += ["%s.append(%s)" % (l, self.e_N(0)), "%s[-1] = %s" % (l, self.e_N(0)),
                     "%s.insert(0, %s)" % (l, self.e_N(0)), "%s.pop()" % l]
        for l in mutable("LT"):
            opts += ["%s.append(%s)" % (l, self.e_T(1)), "%s[0] = %s" % (l, self.e_T(1)),
                     "%s.extend([%s])" % (l, self.e_T(0))]
        for ll in self.vars("LL"):
            if (not pure or ll in self.owned) and "nested" not in self.env.disabled:
                opts += ["%s[0].append(%s)" % (ll, self.e_N(0)),
                         "%s[-1][0] = %s" % (ll, self.e_N(0))]
                if ll not in self.frozen:
                    opts += ["%s.append([%s])" % (ll, self.e_N(0))]
        if not pure and "G_LOG" in self.env.globals:
            if "nested" not in self.env.disabled:
                opts += ["for _l in (G_LOG,):\n%s    _l.append(%s)" % (self.indent, self.e_N(0))]
        for dn in mutable("D"):
            opts += ["%s[%r] = %s" % (dn, self.pick(["a", "b", "c"]), self.e_N(0)),
                     "%s.pop(%r, None)" % (dn, self.pick(["a", "b"]))]
        if self.env.closure:
            # (a nonlocal write through an inlined closure: pijit refuses it today)
            if "cellwrite" not in self.env.disabled and (not pure or self.chance(0.25)):
                opts += ["CL_SET(%s)" % self.e_N(0)]
        if pure:
            if not opts:
                return self.s_assign(depth)
            return self.emit(depth, self.pick(opts))
        for t in self.vars("T")[:3]:
            opts += ["%s[0] = %s" % (t, self.pick(["5.0", "-0.0", "1", self.e_N(0)]))]
        if "G_LOG" in self.env.globals:
            opts += ["G_LOG.append(%s)" % self.pick([self.e_N(0), self.e_T(1), "len(G_LOG)"])] * 2
            opts += ["G_LOG.append('%%s/%%r' %% (%s, %s.shape))" % (self.e_N(0), self.e_T(0)),
                     "G_LOG.append('{:.3f}'.format(%s))" % self.e_N(0)]
            opts += ["print('n', %s, %s.shape)" % (self.e_N(0), self.e_T(0)),
                     "print(%s)" % self.e_T(0),
                     "print(%s, [%s], sep='|', end='$\\n')" % (self.e_T(0), self.e_N(0))]
        if "G_CNT" in self.env.globals:
            opts += ["G_CNT += 1"] * 2
        if "G_S" in self.env.globals:
            opts += ["G_S = %s" % self.e_N(0)]
        if "G_D" in self.env.globals and "G_D" not in self.frozen:
            opts += ["G_D[%r] = %s" % (self.pick(["a", "b", "c"]), self.e_N(0)),
                     "G_D.pop('c', None)", "del G_D[%r]" % self.pick(["a", "c"])]
        if "G_L" in self.env.globals and "G_L" not in self.frozen:
            opts += ["G_L.append(%s)" % self.e_N(0)]
        if "G_SET" in self.env.globals:
            opts += ["G_SET.add(%s)" % self.pick(["1", "3", "4"])]
        if self.env.box:
            opts += ["BOX.hits += 1", "BOX.w = %s" % self.e_N(0), "BOX.t = %s" % self.e_T(0), "del BOX.extra",
                     "BOX.extra = %s" % self.e_N(0), "setattr(BOX, 'flag', %s)" % self.e_B(0)]
            if self.in_method == "BOX":
                opts += ["self.hits += 1", "self.w = %s" % self.e_N(0)]
        if self.env.net:
            if self.in_method == "NET":
                opts += ["self.calls += 1", "self.alpha = %s" % self.e_N(0), "self.p += %s" % self.e_N(0)]
            else:
                opts += ["NET.alpha = %s" % self.e_N(0), "ops.assign(NET.p, NET.p * %s)" % self.e_N(0)]
        for t in self.vars("T")[:2]:  # in place: a tensor the function made, or the caller's
            if "(" not in t and "." not in t:
                opts += ["%s += %s" % (t, self.pick(["1.0", self.e_N(0)]))]
        if not opts:
            return self.s_assign(depth)
        s = self.pick(opts)
        for g in ("G_CNT", "G_S"):
            if s.startswith(g):
                self.globals_written.add(g)
        self.emit(depth, s)

    def s_try(self, depth):
        self.emit(depth, "try:")
        # Names bound in the try body may be unbound in the handler: scope them inside.
        self.scopes.append([])
        self.block(depth + 1, self.r.randint(1, 3))
        if self.chance(0.3):
            # Leave the try body early: the finally block must still run (and may override).
            exits = ["return %s" % self.obj_return(self.ret_expr())]
            if self.loop_depth:
                exits += ["break"] + (["continue"] if self.loop_depth > self.finally_base else [])
            exit_ = self.pick(exits)
            if self.chance(0.5):
                self.emit(depth + 1, "if %s:" % self.e_B(1))
                self.emit(depth + 2, exit_)
            else:
                self.emit(depth + 1, exit_)
        self.scopes.pop()
        if self.chance(0.3):
            self.emit(depth, "finally:")
            self.finally_block(depth + 1, self.r.randint(1, 2))
            if self.chance(0.2):
                self.emit(depth + 1, "if %s:" % self.e_B(1))
                self.emit(depth + 2, "return %s" % self.ret_expr())
            return
        excs = self.pick(["ValueError", "(ValueError, IndexError)", "Exception",
                          "(KeyError, ZeroDivisionError)", "IndexError", "TypeError"])
        name = self.chance(0.6)
        self.emit(depth, "except %s%s:" % (excs, " as exc" if name else ""))
        if name and "G_LOG" in self.env.globals and not self.env.pure and self.chance(0.7):
            self.emit(depth + 1, "G_LOG.append(%s)" % self.pick(
                ["str(exc)", "type(exc).__name__", "repr(exc)", "exc.args"]))
        self.block(depth + 1, self.r.randint(0, 2))
        if self.chance(0.2):
            self.emit(depth, "else:")
            self.block(depth + 1, 1)
        if self.chance(0.35):
            self.emit(depth, "finally:")
            self.finally_block(depth + 1, 1)

    def finally_block(self, depth, n):
        # 3.7 refuses `continue` in a finally clause (outside a loop nested in it).
        saved, self.finally_base = self.finally_base, self.loop_depth
        self.block(depth, n)
        self.finally_base = saved

    def s_unpack(self, depth):
        c = self.r.random()
        if c < 0.35:
            a, b = self.fresh("t"), self.fresh("n")
            self.emit(depth, "%s, %s = %s, %s" % (a, b, self.e_T(1), self.e_N(0)))
            self.bind(a, "T")
            self.bind(b, "N")
        elif c < 0.6 and self.vars("LT"):
            a, rest = self.fresh("t"), self.fresh("lt")
            self.emit(depth, "%s, *%s = %s" % (a, rest, self.pick(self.vars("LT"))))
            self.bind(a, "T")
            self.bind(rest, "LT")
        elif c < 0.7 and len(self.targets("T")) >= 2:
            a, b = self.r.sample(self.targets("T"), 2)
            self.emit(depth, "%s, %s = %s, %s" % (a, b, b, a))
        elif c < 0.85 and (self.targets("LN") or self.targets("D")):
            # Aliases of containers through unpacking (a write through them is a write to the
            # original): (a, b) = l, d / (a,) = (l,) / a, key = [d, 'a'].
            src = self.pick(self.targets("LN") + self.targets("D"))
            kind = "LN" if src in self.vars("LN") else "D"
            a, b = self.fresh("ln" if kind == "LN" else "d"), self.fresh("n")
            form = self.r.randint(0, 2)
            if form == 2:
                self.emit(depth, "%s, *_r = %s, %s" % (a, src, self.e_N(0)))
            else:
                self.emit(depth, ("%s, %s = %s, %s" if form == 0 else "(%s, %s), = [(%s, %s)]")
                          % (a, b, src, self.e_N(0)))
                self.bind(b, "N")
            self.bind(a, kind)
            if src in self.owned:
                self.owned.add(a)
        else:
            a, b, cc = self.fresh("t"), self.fresh("t"), self.fresh("n")
            self.emit(depth, "(%s, %s), %s = (%s, %s), %s" % (a, b, cc, self.e_T(0), self.e_T(0),
                                                              self.e_N(0)))
            self.bind(a, "T")
            self.bind(b, "T")
            self.bind(cc, "N")

    def s_nested_def(self, depth):
        name = self.fresh("g")
        c = self.r.random()
        outer_nums = [v for v in self.vars("N") if v.startswith("n")]
        if c < 0.4 and outer_nums:
            # A closure that rebinds an enclosing local (nonlocal, a cell).
            cellv = self.pick(outer_nums)
            self.emit(depth, "def %s(t, s=%s):" % (name, self.lit_float()))
            self.emit(depth + 1, "nonlocal %s" % cellv)
            self.emit(depth + 1, "%s = %s + s" % (cellv, cellv))
            self.emit(depth + 1, "return t * %s" % cellv)
        elif c < 0.7:
            self.emit(depth, "%s = lambda t: %s" % (name, self.pick(
                ["t * 2.0", "t + %s" % self.e_N(0), "ops.relu(t) - 1.0", "t.sum()"])))
        else:
            sub = Body(self.r, self.env, [Var("t", "T")] + [v for sc in self.scopes for v in sc
                                                             if v.kind in ("T", "N", "LN")],
                       indent=self.indent + "    " * (depth + 1), budget=2, allow_nested=False)
            sub.counter = self.counter + 100
            sub.frozen = set(self.frozen)
            sub.block(0, 2)
            self.counter = sub.counter
            if sub.globals_written:
                sub.lines.insert(0, sub.indent + "global " + ", ".join(sorted(sub.globals_written)))
            self.emit(depth, "def %s(t, *more, **opts):" % name)
            self.lines.extend(sub.lines)
            self.emit(depth + 1, "return t + %s" % self.pick(["len(more)", "opts.get('k', 0.5)",
                                                            "sum(more)", "1.0"]))
        self.bind(name, "FN")

    def s_raise(self, depth):
        self.emit(depth, "if %s:" % self.e_B(1))
        exc = self.pick(["ValueError('bad %r' % (" + self.e_N(0) + ",))", "KeyError('k')",
                         "IndexError('no such item')", "RuntimeError('stop')"])
        self.emit(depth + 1, "raise %s" % exc)

    def ret_expr(self):
        c = self.r.random()
        if c < 0.35:
            return self.e_T(2)
        if c < 0.7:
            n = self.r.randint(2, 4)
            items = []
            for _ in range(n):
                k = self.pick(["T", "T", "N", "LN", "LT", "D", "I", "B"])
                pool = self.vars(k) if k not in ("B",) else []
                if pool and self.chance(0.6):
                    items.append(self.pick(pool))
                else:
                    items.append(self.expr(k, 1))
            return "(%s)" % ", ".join(items) if self.chance(0.8) else "[%s]" % ", ".join(items)
        if c < 0.8:
            return "{'out': %s, 'n': %s}" % (self.e_T(1), self.e_N(1))
        if c < 0.88:
            every = self.vars("T") + self.vars("LT") + self.vars("LN") + self.vars("D") + \
                [p + self.pick(["", "._replace(b=0)", "[:1]", " + (1,)"]) for p in self.vars("NT")]
            if every:
                return self.pick(every)
            return self.e_T(1)
        if c < 0.95:
            # The same object twice, or an argument itself: identities must survive.
            every = [v for v in self.vars("T") + self.vars("LT") + self.vars("LN") + self.vars("D")
                     + self.vars("LL") + self.vars("NT") if "(" not in v]
            if every:
                v = self.pick(every)
                return self.pick(["%s, %s" % (v, v), "[%s, %s]" % (v, v),
                                  "%s, [%s]" % (v, v), "{'a': %s, 'b': %s}" % (v, v),
                                  # the same object through containers and unpackings
                                  "[%s][0], %s" % (v, v), "(%s, 1)[-2], 0" % v,
                                  "{'k': %s}['k'], 1" % v, "dict(a=%s)['a'], 2" % v,
                                  "{**{'a': %s}}['a'], 3" % v, "[e for e in (%s,)][0], 4" % v,
                                  "sorted([%s], key=id)[0], 5" % v,
                                  "list(reversed([%s, 0]))[-1], 6" % v,
                                  "max([%s], key=len), 7" % v if not v.startswith("t") else
                                  "[%s, %s][::-1][0], 7" % (v, v),
                                  "(lambda *a: a[0])(%s), 9" % v])
        return "%s, %s" % (self.e_T(1), self.e_T(0))

    # ---- user objects made inside the function (env.objs) -----------------------------------
    # Statements that make instances of the prelude's classes (Program.objects_prelude) and use
    # them: attributes read, written and deleted, methods, properties, getattr/setattr/hasattr,
    # lists of them iterated, instances nested in instances, passed to user functions, stored
    # outside (globals, HOLD, G_OBJS, BOX), changed after they escaped, used across graph
    # breaks, and the dunders of W that capture must never run. All their randomness comes from
    # env.ro, and they are extra statements (outside the budget): a program without objects is
    # the very program the generator made before they existed.
    def s_obj(self, depth):
        saved, self.r = self.r, self.env.ro
        try:
            have = [k for k in OBJ_KINDS if self.vars(k)]
            c = self.r.random()
            if not have or c < 0.25:
                return self.o_make(depth)
            if c < 0.5:
                return self.o_read(depth, self.pick(have))
            if c < 0.72:
                return self.o_write(depth, self.pick(have))
            if c < 0.82:
                return self.o_list(depth)
            if c < 0.9 and not self.env.pure and self.env.oc.get("hold"):
                return self.o_escape(depth)
            if c < 0.95:
                return self.o_break(depth)
            return self.o_read(depth, self.pick(have))
        finally:
            self.r = saved

    def o_var(self, kind):
        vs = self.vars(kind)
        return self.pick(vs) if vs else None

    def o_try(self, depth, lines, excs, fallback=None):
        """lines inside try/except excs; fallback: a line for the handler (pass if None)."""
        self.emit(depth, "try:")
        for l in lines:
            self.emit(depth + 1, l)
        self.emit(depth, "except %s:" % excs)
        self.emit(depth + 1, fallback or "pass")

    def o_make(self, depth):
        oc = self.env.oc
        T, N, I = (lambda: self.e_T(1)), (lambda: self.e_N(0)), (lambda: self.e_I(0))
        kinds = ["OP"] * 4 + [k for k, flag in (("OS", "sl"), ("OC", "dc"), ("OF", "fn"),
                                                 ("OW", "w"), ("OR", "rf")) if oc.get(flag)]
        if self.vars("OP"):
            kinds += ["LO", "NEST"]
        kind = self.pick(kinds)
        if kind == "OP":
            forms = ["Pt(%s, %s)" % (T(), N()), "Pt(%s)" % T(), "Pt(%s, b=%s)" % (T(), N()),
                     "Pt(b=%s, a=%s)" % (N(), T()), "Pt.make(%s)" % T(), "make_pt(%s)" % T(),
                     "make_pt(%s, b=%s)" % (T(), N())]
            if oc["init"] == "kwonly":
                forms += ["Pt(%s, %s, tag=%s)" % (T(), N(), I())]
            if oc["init"] == "kw":
                forms += ["Pt(%s, %s, k=%s)" % (T(), N(), N())]
            if oc["init"] == "mutdefault":
                forms += ["Pt(%s, %s, [%s])" % (T(), N(), N())]
            if oc["sub"]:
                forms += ["Sub(%s, %s, %s)" % (T(), N(), I()), "Sub(%s)" % T(),
                          "Sub(%s, k=%s)" % (T(), N()), "Sub.make(%s)" % T()]
            e = self.pick(forms)
        elif kind == "OS":
            e = self.pick(["Sl(%s)" % T(), "Sl(%s, %s)" % (T(), T()), "Sl(u=%s)" % T()])
        elif kind == "OC":
            e = self.pick(["DC(%s)" % N(), "DC(%s, sh=%s)" % (N(), N()),
                           "DC(s=%s, tags=[%s])" % (N(), N()), "DC(%s, %s, [])" % (N(), N())])
        elif kind == "OF":
            e = self.pick(["Fn(%s)" % N(), "Fn(%s, bias=%s)" % (N(), N())])
        elif kind == "OW":
            e = "W(%s)" % self.pick(["0", "1", "2", self.e_I(0)])
        elif kind == "OR":
            e = "Rf(%s)" % T()
        elif kind == "LO":
            o = self.o_var("OP")
            e = self.pick(["[%s]" % o, "[%s, %s]" % (o, self.o_var("OP")),
                           "[%s, Pt(%s, %s)]" % (o, T(), N()),
                           "[Pt(%s * _j, _j) for _j in range(%s)]" % (T(), self.pick(["2", "3"])),
                           "[%s] * 2" % o])
        else:  # NEST: an instance holding another (and maybe a list of them)
            o = self.o_var("OP")
            name = self.fresh_bind("o", "OP")
            self.emit(depth, "%s = %s" % (name, self.pick(
                ["link(Pt(%s, %s), %s)" % (T(), N(), o), "Pt(%s.a, %s)" % (o, N())])))
            if self.chance(0.6):
                self.emit(depth, "%s.child = %s" % (name, self.pick([o, "[%s]" % o,
                                                                     "(%s, %s)" % (o, o)])))
            return
        name = self.fresh_bind("lo" if kind == "LO" else "o", kind)
        self.emit(depth, "%s = %s" % (name, e))

    def o_read(self, depth, kind):
        """Binds a tensor or a number read from an object."""
        oc, o = self.env.oc, self.o_var(kind)
        T, N = (lambda: self.e_T(1)), (lambda: self.e_N(0))
        ts, ns = [], []
        if kind == "OP":
            o2 = self.o_var("OP")
            ts += ["%s.a" % o, "%s.mix(%s)" % (o, T()), "%s.total" % o, "(%s.a * %s.b)" % (o, o),
                   "getattr(%s, 'a')" % o, "use_obj(%s, %s)" % (o, T()),
                   "(%s.a if hasattr(%s, 'extra') else %s)" % (o, o, T()),
                   "type(%s).make(%s).a" % (o, T()), "(%s.a + %s.a)" % (o, o2),
                   "(lambda q: q.a * 2.0)(%s)" % o, "%s.__class__.unit() * %s" % (o, T()),
                   "(%s.a * %s.w0)" % (o, o), "(Pt.w0 + %s)" % T()]
            ns += ["%s.b" % o, "%s.half" % o, "%s.dims" % o, "Pt.unit()", "%s.unit()" % o,
                   "getattr(%s, 'extra', %s)" % (o, N()), "%s.n" % o, "len(%s.items)" % o,
                   "%s.bump(%s)" % (o, N()), "isinstance(%s, %s)" % (o, self.pick(["Pt", "Sub"])
                                                                    if oc["sub"] else "Pt"),
                   "(%s is %s)" % (o, o2), "(type(%s) is Pt)" % o, "hasattr(%s, 'extra')" % o,
                   "sum(%s.items + [0])" % o, "len(vars(%s))" % o, "%s.half + %s.b" % (o, o2),
                   "getattr(%s, 'b' if %s else 'n')" % (o, self.e_B(0)),
                   "(%s.child.b if hasattr(%s, 'child') else 0.5)" % (o, o)]
            if self.chance(0.15):
                # a closure over a made object (it may change the object, and may escape)
                g = self.fresh_bind("g", "FN")
                if self.chance(0.6):
                    return self.emit(depth, "%s = lambda t: t * %s.b + %s.a" % (g, o, o))
                self.emit(depth, "def %s(t):" % g)
                self.emit(depth + 1, "%s.n += 1" % o)
                return self.emit(depth + 1, "return t - %s.b" % o)
            if oc["call"]:
                ts += ["%s(%s)" % (o, T())]
        elif kind == "OS":
            ts += ["%s.u" % o, "%s.get()" % o, "getattr(%s, 'v', %s)" % (o, T())]
            ns += ["hasattr(%s, 'v')" % o, "isinstance(%s, Sl)" % o]
        elif kind == "OC":
            ts += ["%s.scaled(%s)" % (o, T()), "(%s * %s.s)" % (T(), o)]
            ns += ["%s.s" % o, "%s.sh" % o, "len(%s.tags)" % o,
                   "(%s == %s)" % (o, self.o_var("OC")), "(%s != DC(%s))" % (o, N()),
                   "dataclasses.replace(%s, s=%s).s" % (o, N()), "dataclasses.astuple(%s)[0]" % o,
                   "dataclasses.asdict(%s)['sh']" % o, "isinstance(%s, DC)" % o,
                   "len(dataclasses.fields(%s))" % o]
        elif kind == "OF":
            ts += ["%s(%s)" % (o, T()), "%s(%s(%s))" % (o, o, T())]
            ns += ["%s.calls" % o, "%s.k" % o]
        elif kind == "OW":
            return self.o_weird(depth, o)
        elif kind == "OR":
            ts += ["%s.a" % o, "%s.get(%s)" % (o, T())]
            ns += ["hasattr(%s, 'a')" % o]
        elif kind == "LO":
            return self.o_iterate(depth, o)
        if ts and (not ns or self.chance(0.55)):
            self.emit(depth, "%s = %s" % (self.fresh_bind("t", "T"), self.pick(ts)))
        else:
            self.emit(depth, "%s = %s" % (self.fresh_bind("n", "N"), self.pick(ns)))

    def o_write(self, depth, kind):
        oc, o = self.env.oc, self.o_var(kind)
        T, N = (lambda: self.e_T(1)), (lambda: self.e_N(0))
        if kind == "OP":
            opts = ["%s.a = %s" % (o, T()), "%s.b = %s" % (o, N()), "%s.extra = %s" % (o, N()),
                    "setattr(%s, 'extra', %s)" % (o, N()), "setattr(%s, 'b', %s)" % (o, N()),
                    "%s.items.append(%s)" % (o, N()), "%s.n += 1" % o, "%s.dims = %s" % (o, N()),
                    "%s.b += %s" % (o, N()), "%s.a = %s.a * %s" % (o, o, N()),
                    "%s.bump(%s)" % (o, N()), "%s.child = %s" % (o, self.o_var("OP")),
                    "%s.mix = lambda t: t * 2.0" % o, "%s.child = %s" % (o, o),
                    "del %s.b; %s.b = %s" % (o, o, N()), "%s.items = [%s, %s]" % (o, o, N())]
            o2 = self.o_var("OP")
            opts += ["%s.child = %s; %s.child = %s" % (o, o2, o2, o)]
            if oc["sub"]:
                opts += ["%s.__class__ = %s" % (o, self.pick(["Sub", "Pt"]))]
            if not self.env.pure:
                opts += ["Pt.dims = %s" % N(), "%s.a[...] = %s" % (o, N())]
                opts += ["%s.items = %s" % (o, l) for l in self.vars("LN") if "(" not in l]
            c = self.r.random()
            if c < 0.12:
                if oc["setter"]:
                    return self.emit(depth, "%s.total = %s" % (o, N()))
                return self.o_try(depth, ["%s.total = %s" % (o, N())], "AttributeError")
            if c < 0.2:
                return self.o_try(depth, ["%s.half = %s" % (o, N())], "AttributeError")
            if c < 0.3:
                self.emit(depth, "if hasattr(%s, 'extra'):" % o)
                return self.emit(depth + 1, "del %s.extra" % o)
            if c < 0.36:
                return self.o_try(depth, ["delattr(%s, %r)" % (o, self.pick(["extra", "child"]))],
                                  "AttributeError")
            return self.emit(depth, self.pick(opts))
        if kind == "OS":
            c = self.r.random()
            if c < 0.2:
                return self.o_try(depth, ["%s.w = 1" % o], "AttributeError")
            if c < 0.35:
                self.emit(depth, "if hasattr(%s, 'v'):" % o)
                return self.emit(depth + 1, "del %s.v" % o)
            return self.emit(depth, self.pick(["%s.u = %s" % (o, T()), "%s.v = %s" % (o, T()),
                                               "setattr(%s, 'v', %s)" % (o, T())]))
        if kind == "OC":
            opts = ["%s.s = %s" % (o, N()), "%s.sh = %s" % (o, N())]
            w = self.pick(opts)
            if oc["dc"] == "frozen":
                self.o_try(depth, [w], "dataclasses.FrozenInstanceError")
            else:
                self.emit(depth, w)
            if self.chance(0.4):
                self.emit(depth, "%s.tags.append(%s)" % (o, N()))
            return
        if kind == "OF":
            return self.emit(depth, self.pick(["%s.k = %s" % (o, N()), "%s.bias = %s" % (o, T()),
                                               "%s.calls = 0" % o]))
        if kind == "OR":
            return self.emit(depth, "%s.a = %s" % (o, T()))
        if kind == "OW":
            return self.emit(depth, "%s.v = %s" % (o, self.pick(["0", "1", "2", "-1"])))
        return self.o_list(depth)

    def o_weird(self, depth, w):
        """W's __eq__/__hash__/__floor__/__index__/__float__ run by the operations that call them
        (never by capture: they raise or count in W.evals)."""
        w2 = self.o_var("OW")
        e = self.pick(["(%s == W(%s))" % (w, self.pick(["0", "1"])), "(%s in [W(1), %s])" % (w, w2),
                       "[%s, W(2)].count(%s)" % (w2, w), "[W(0), %s].index(%s)" % (w2, w),
                       "math.floor(%s)" % w, "[10, 20, 30][%s]" % w, "float(%s)" % w,
                       "(%s != %s)" % (w, w2), "{%s: 1}.get(%s, 0)" % (w2, w),
                       "len(range(%s))" % w, "float(%s[%s].sum())" % (self.e_T(0), w),
                       "math.ceil(%s)" % w, "round(%s)" % w, "(%s == %s)" % (w, w2)])
        name = self.fresh("n")
        self.o_try(depth, ["%s = %s" % (name, e)], "(RuntimeError, TypeError, IndexError, ValueError)",
                   "%s = -1" % name)
        self.bind(name, "N")

    def o_list(self, depth):
        lo = self.o_var("LO")
        o = self.o_var("OP")
        if not lo or not o:
            return self.o_make(depth)
        c = self.r.random()
        if c < 0.5:
            return self.emit(depth, self.pick(["%s.append(%s)" % (lo, o), "%s.insert(0, %s)" % (lo, o),
                                               "%s.extend([%s, %s])" % (lo, o, self.o_var("OP")),
                                               "%s.append(Pt(%s))" % (lo, self.e_T(1)),
                                               "%s[0] = %s" % (lo, o), "%s += [%s]" % (lo, o)]))
        return self.o_iterate(depth, lo)

    def o_iterate(self, depth, lo):
        c = self.r.random()
        if c < 0.35:
            acc = self.fresh("t")
            e = self.fresh("e")
            self.emit(depth, "%s = %s" % (acc, self.e_T(1)))
            self.emit(depth, "for %s in %s:" % (e, lo))
            self.emit(depth + 1, "%s = %s + %s" % (acc, acc, self.pick(
                ["%s.mix(%s)" % (e, acc), "%s.a * %s.b" % (e, e), "%s.total" % e])))
            if self.chance(0.4):
                self.emit(depth + 1, "%s.n += 1" % e)
            self.bind(acc, "T")
        elif c < 0.5:
            e = self.fresh("e")
            self.emit(depth, "for %s in %s:" % (e, lo))
            self.emit(depth + 1, self.pick(["%s.b = %s.b + 1" % (e, e), "%s.bump(len(%s))" % (e, lo),
                                            "%s.a = %s.a * 0.5" % (e, e)]))
        elif c < 0.75:
            self.emit(depth, "%s = %s" % (self.fresh_bind("n", "N"), self.pick(
                ["sum(e.b for e in %s)" % lo, "len(%s)" % lo, "%s[-1].b" % lo,
                 "max(%s, key=lambda e: e.b).n" % lo, "sorted(%s, key=lambda e: e.b)[0].b" % lo,
                 "(%s in %s)" % (self.o_var("OP"), lo), "%s.index(%s[-1])" % (lo, lo),
                 "len([e for e in %s if e.b > 0])" % lo])))
        elif c < 0.8:
            self.emit(depth, "%s = %s" % (self.fresh_bind("t", "T"), self.pick(
                ["%s[0].a" % lo, "%s[-1].mix(%s)" % (lo, self.e_T(0)),
                 "sum([e.a for e in %s])" % lo, "sum(e.a for e in each(%s))" % lo,
                 "next(e for e in %s if e.n >= 0).a" % lo])))
        elif c < 0.9:
            # generators over made objects (a generator function changes them as it yields)
            c2 = self.r.random()
            if c2 < 0.4:
                acc, e = self.fresh("t"), self.fresh("e")
                self.emit(depth, "%s = %s" % (acc, self.e_T(0)))
                self.emit(depth, "for %s in each(%s):" % (e, lo))
                self.emit(depth + 1, "%s = %s + %s.a" % (acc, acc, e))
                self.bind(acc, "T")
            elif c2 < 0.7:
                self.emit(depth, "%s = %s" % (self.fresh_bind("lo", "LO"), self.pick(
                    ["list(e for e in %s if e.b != 0)" % lo, "[e for e in each(%s)]" % lo,
                     "list(each(%s))" % lo, "[Pt(e.a, e.n) for e in each(%s)]" % lo])))
            else:
                self.emit(depth, "%s = %s" % (self.fresh_bind("n", "N"), self.pick(
                    ["any(e.b > 1 for e in %s)" % lo, "all(e.n == 0 for e in each(%s))" % lo,
                     "max(e.b for e in %s)" % lo, "next((e.b for e in %s if e.b < 0), -1.0)" % lo])))
        else:
            self.emit(depth, "%s = [e.a for e in %s]" % (self.fresh_bind("lt", "LT"), lo))

    def o_escape(self, depth):
        """The object leaves the frame: a global, HOLD, G_OBJS, BOX; sometimes changed after."""
        kinds = [k for k in OBJ_KINDS if self.vars(k)]
        o = self.o_var(self.pick(kinds))
        opts = ["G_OBJ = %s" % o, "HOLD.o = %s" % o, "G_OBJS.append(%s)" % o,
                "HOLD.log.append(%s)" % o, "setattr(HOLD, 'o', %s)" % o]
        if self.env.box:
            opts += ["BOX.obj = %s" % o]
        if self.chance(0.3):
            # what earlier calls left outside: rebuilt objects, read and changed again
            c = self.r.random()
            if c < 0.4:
                self.emit(depth, "if isinstance(G_OBJ, Pt):")
                self.emit(depth + 1, self.pick(["G_OBJ.b += 1", "G_OBJ.n += 1",
                                                "G_OBJ.a = G_OBJ.a * 2.0", "G_OBJ.bump(1)"]))
                return
            if c < 0.7:
                n = self.fresh_bind("n", "N")
                return self.emit(depth, "%s = %s" % (n, self.pick(
                    ["len(G_OBJS)", "sum(getattr(e, 'n', 0) for e in G_OBJS)",
                     "getattr(getattr(HOLD, 'o', None), 'n', -1)", "(G_OBJ is None)",
                     "len(HOLD.log)", "(getattr(HOLD, 'o', None) is G_OBJ)"])))
            self.emit(depth, "for _e in HOLD.log[-2:]:")
            self.emit(depth + 1, "_e.n = getattr(_e, 'n', 0) + 1")
            return
        # the caller's containers (arguments): rarely, as their other users want numbers
        if self.chance(0.15):
            opts = ["%s.append(%s)" % (l, o) for l in self.vars("LN") + self.vars("LT")
                    if "(" not in l and l not in self.frozen] + \
                ["%s['o'] = %s" % (dn, o) for dn in self.vars("D") if dn not in self.frozen] or opts
        s = self.pick(opts)
        if s.startswith("G_OBJ ="):
            self.globals_written.add("G_OBJ")
        self.emit(depth, s)
        if self.chance(0.4) and self.vars("OP"):
            self.o_write(depth, "OP")

    def o_break(self, depth):
        """An object live across a graph break (a tensor's data read, a print, a branch)."""
        o = self.o_var("OP")
        if not o:
            return self.o_make(depth)
        c = self.r.random()
        if c < 0.4:
            self.emit(depth, "%s.b = %s" % (o, self.pick(["float(%s.a.sum())" % o,
                                                         "%s.a.sum().item()" % o,
                                                         "int((%s.a > 0).sum())" % o])))
        elif c < 0.6 and not self.env.pure:
            c2 = self.o_var("OC")
            self.emit(depth, self.pick(["print('o', %s.b, %s.a.shape)" % (o, o),
                                        "print(%s)" % c2 if c2 else "print(%s.n)" % o]))
        elif c < 0.8:
            self.emit(depth, "if (%s.a > 0).any():" % o)
            self.emit(depth + 1, "%s.b = %s" % (o, self.e_N(0)))
            self.emit(depth, "else:")
            self.emit(depth + 1, "%s.n += 1" % o)
        else:
            n = self.fresh_bind("n", "N")
            self.emit(depth, "%s = float(%s.total.sum()) + %s.b" % (n, o, o))

    def obj_return(self, ret, objs=None):
        """Made objects in what the function returns (objs, or those in scope): alone, beside
        the result, twice, nested."""
        if not self.env.objs or not self.returns_objs:
            return ret
        saved, self.r = self.r, self.env.ro
        try:
            if objs is None:
                objs = [v for k in OBJ_KINDS for v in self.vars(k)]
            if not objs or self.chance(0.25):
                return ret
            o, o2 = self.pick(objs), self.pick(objs)
            forms = ["(%s), %s" % (ret, o), "(%s), %s, %s" % (ret, o, o), o, "[%s, %s]" % (o, o2),
                     "(%s), {'p': %s, 'q': %s}" % (ret, o, o2), "(%s), (%s, [%s])" % (ret, o, o)]
            ops_ = [v for v in objs if v in self.vars("OP")]
            if ops_:
                forms += ["(%s), link(Pt(%s, 1.0), %s)" % (ret, self.e_T(0), o),
                          "(%s), (lambda t: t * %s.b)" % (ret, self.pick(ops_))]
            if self.env.oc.get("hold") and not self.env.pure:
                forms += ["(%s), %s, G_OBJ" % (ret, o), "(%s), HOLD" % ret]
            return self.pick(forms)
        finally:
            self.r = saved


    def finish(self):
        ret = self.ret_expr()
        if self.env.objs:
            ret = self.obj_return(ret, self.top_objs)
        if self.env.fx and self.returns_objs:
            ret = self.feature_return(ret)
        self.emit(0, "return %s" % ret)
        if self.globals_written:
            self.lines.insert(0, self.indent + "global " + ", ".join(sorted(self.globals_written)))
        return self.lines


# ---- values for drive() ------------------------------------------------------------------------
def tensor_literal(r, shape, dtype):
    def val():
        if dtype == "float32":
            c = r.random()
            if c < 0.06:
                return r.choice(["float('nan')", "float('inf')", "-0.0"])
            if c < 0.2:      # values whose sums and products round (order matters)
                return r.choice(["0.1", "1e8", "-3.3", "1e-7", "65504.0", "1e38", "0.3",
                                 "-1e8", "16777217.0", "1e-40"])
            return r.choice(["1.0", "2.0", "-1.5", "0.5", "3.0", "-2.0", "0.0", "-0.5", "1.25"])
        if dtype == "int64":
            if r.random() < 0.05:
                return r.choice(["2 ** 62", "-2 ** 63", "2 ** 31", "-7"])
            return r.choice(["0", "1", "2", "3", "-1", "-4"])
        return r.choice(["True", "False"])

    def build(dims):
        if not dims:
            return val()
        return "[%s]" % ", ".join(build(dims[1:]) for _ in range(dims[0]))

    return "pj.Tensor(%s, pj.%s)" % (build(list(shape)), "bool_" if dtype == "bool" else dtype)


def pick_dtype(r):
    c = r.random()
    return "float32" if c < 0.75 else ("int64" if c < 0.92 else "bool")


class Program(object):
    def __init__(self, seed, disabled=()):
        self.r = random.Random(seed)
        self.seed = seed
        self.env = Env()
        self.env.disabled = set(disabled)
        # Everything about user objects is drawn from a stream of its own: with it left out
        # (or not drawn) a program is exactly what the generator made before objects existed.
        self.ro = self.env.ro = random.Random(seed * 7919 + 0x0B1EC7)
        self.env.fr = gen_features.streams(seed)
        self.out = []

    def w(self, text=""):
        self.out.append(text)

    # ---- module-level state -----------------------------------------------------------------
    def globals_(self):
        r, env = self.r, self.env
        env.pure = r.random() < 0.5
        self.w("import pijit as pj")
        self.w("from pijit import ops, nn")
        self.w("import math")
        self.w("from collections import OrderedDict, namedtuple")
        self.w("")
        self.w("")
        self.w("class MyD(dict):")
        self.w("    pass")
        self.w("")
        self.w("")
        self.w("class MyL(list):")
        self.w("    pass")
        self.w("")
        self.w("")
        self.w("P = namedtuple('P', 'a b')")
        self.w("")
        if r.random() < 0.7:
            self.w("G_S = %s" % r.choice(["2.0", "2", "0.5", "-1.0", "3", "True"]))
            env.globals["G_S"] = "N"
        if r.random() < 0.4:
            self.w("G_N = %s" % r.choice(["1", "2", "3"]))
            env.globals["G_N"] = "I"
        if r.random() < 0.5:
            self.w("G_CNT = 0")
            env.globals["G_CNT"] = "I"
        if r.random() < 0.6:
            self.w("G_LOG = []")
            env.globals["G_LOG"] = "LOG"
            if not env.pure:
                env.ctx = True
                self.w("")
                self.w("")
                self.w("class Ctx(object):")
                self.w("    def __enter__(self):")
                self.w("        G_LOG.append('enter')")
                self.w("        return self")
                self.w("")
                self.w("    def __exit__(self, *exc):")
                self.w("        G_LOG.append('exit %s' % (exc[0].__name__ if exc[0] else None))")
                self.w("        return False")
                self.w("")
                self.w("")
                self.w("CTX = Ctx()")
        if r.random() < 0.4:
            self.w("G_L = [1.0, 2, -0.5]")
            env.globals["G_L"] = "LN"
        if r.random() < 0.5:
            self.w("G_D = {'a': 1.5, 'b': 2}")
            env.globals["G_D"] = "D"
        if r.random() < 0.35:
            self.w("G_OD = OrderedDict([('a', %s), ('b', %s), ('c', %s)])" % (
                r.choice(FLOAT_VALUES), r.choice(INT_VALUES), r.choice(FLOAT_VALUES)))
            env.globals["G_OD"] = "OD"
        if r.random() < 0.25:
            self.w("G_SET = {1, 2}")
            env.globals["G_SET"] = "SET"
        if r.random() < 0.4:
            self.w("G_T = %s" % tensor_literal(r, r.choice([(3,), (1,), ()]), "float32"))
            env.globals["G_T"] = "T"
        for name in gen_features.NAMES:
            if name not in env.disabled and env.fr[name].random() < globals()[FEATURE_P[name]]:
                env.fx.add(name)
                gen_features.prelude(self, name)
        if "objects" not in env.disabled and self.ro.random() < OBJ_PROGRAM_P:
            self.objects_prelude()

    def body(self, params, indent="    ", budget=None, in_method=None, allow_nested=True, frozen=(),
             target=False):
        b = Body(self.r, self.env, params, indent=indent,
                 budget=budget if budget is not None else self.r.randint(3, 10),
                 in_method=in_method, allow_nested=allow_nested)
        b.returns_objs = target
        b.frozen.update(frozen)
        b.block(0, b.budget)
        return b.finish()

    def classes(self):
        r, env = self.r, self.env
        if r.random() < 0.1 and "subclass" not in env.disabled:
            env.subclass = True
            self.w("")
            self.w("class MyT(pj.Tensor):")
            self.w("    def __add__(self, other):")
            self.w("        return pj.Tensor.__add__(self, other) * %s" % r.choice(["2.0", "-1.0"]))
            self.w("")
            self.w("    def sum(self, *a, **k):")
            self.w("        return pj.Tensor.sum(self, *a, **k) + 100.0")
        if r.random() < 0.45:
            env.box = True
            self.w("")
            self.w("class Count(object):")
            self.w('    """A descriptor that counts how often it is read."""')
            self.w("    n = 0")
            self.w("")
            self.w("    def __get__(self, obj, cls):")
            self.w("        Count.n += 1")
            self.w("        return %s" % r.choice(["2.0", "3", "-0.5"]))
            self.w("")
            self.w("")
            self.w("class Box(object):")
            self.w("    k = %s" % r.choice(["2.0", "3", "-1.0"]))
            self.w("    c = Count()")
            self.w("    eqs = 0")
            self.w("")
            self.w("    def __init__(self, w):")
            self.w("        self.w = w")
            self.w("        self.hits = 0")
            self.w("        self.t = pj.Tensor([1.0])")
            self.w("        self.vals = [%s, %s, %s]" % tuple(r.choice(FLOAT_VALUES) for _ in range(3)))
            self.w("")
            self.w("    def __eq__(self, other):")
            self.w("        Box.eqs += 1")
            self.w("        return isinstance(other, Box) and self.w == other.w")
            self.w("")
            self.w("    __hash__ = object.__hash__")
            self.w("")
            self.w("    @property")
            self.w("    def wk(self):")
            self.w("        return self.w * self.k")
            self.w("")
            self.w("    def scale(self, t):")
            saved, env.box = env.box, False     # no recursion through BOX inside Box's methods
            self.out.extend(self.body([Var("self", "BOXSELF"), Var("t", "T")], indent="        ",
                                      budget=r.randint(0, 3), allow_nested=False)
                            if r.random() < 0.5 else
                            ["        return t * self.w + Box.k"] if env.pure else
                            ["        self.hits += 1", "        return t * self.w + Box.k"])
            env.box = saved
            self.w("")
            self.w("    def pair(self, a, b=1.0):")
            self.w("        return a - b, self.w")
            self.w("")
            self.w("    def fold(self, t):")
            self.w("        for v in self.vals:")
            self.w("            t = t * v + 1.0")
            self.w("        return t")
            self.w("")
            self.w("")
            self.w("class Box2(Box):")
            self.w('    """Another class BOX.__class__ may be set to (the same layout)."""')
            self.w("    k = %s" % r.choice(["-0.5", "4"]))
            self.w("")
            self.w("    def scale(self, t):")
            self.w("        return t * 2.0 - self.w")
            self.w("")
            self.w("    def fold(self, t):")
            self.w("        return t - len(self.vals)")
            self.w("")
            self.w("")
            self.w("def _alt_scale(self, t):")
            self.w("    return t - self.w")
            self.w("")
            self.w("BOX = Box(%s)" % r.choice(["1.5", "2", "-0.5", "0.0"]))
        if r.random() < 0.35:
            env.net = True
            n = r.choice([3, 1])
            self.w("")
            self.w("class Net(nn.Cell):")
            self.w("    def __init__(self):")
            self.w("        super().__init__()")
            self.w("        self.p = pj.Parameter(%s, name='p')"
                   % tensor_literal(r, (n,), "float32"))
            self.w("        self.alpha = %s" % r.choice(["0.5", "2", "-1.0"]))
            self.w("        self.calls = 0")
            self.w("")
            self.w("    def construct(self, x):")
            if r.random() < 0.5:
                saved, env.net = env.net, False
                self.out.extend(self.body([Var("x", "T")], indent="        ",
                                          budget=r.randint(1, 3), in_method="NET",
                                          allow_nested=False))
                env.net = saved
            else:
                if not env.pure:
                    self.w("        self.calls += 1")
                self.w("        return x * self.alpha + self.p.sum()")
            self.w("")
            self.w("")
            self.w("class Net2(Net):")
            self.w("    def construct(self, x):")
            self.w("        return x * self.alpha - 2.0")
            self.w("")
            self.w("NET = Net()")
            if r.random() < 0.5:
                env.seq = True
                self.w("")
                self.w("")
                self.w("def _net(a, cls=Net2):")
                self.w("    c = cls()")
                self.w("    c.alpha = a")
                self.w("    return c")
                self.w("")
                net = lambda vals: "_net(%s%s)" % (r.choice(vals), r.choice(["", ", Net"]))
                self.w("SEQ = nn.SequentialCell([%s, %s, %s])"
                       % tuple(net(["0.5", "-2.0", "1.5", "3"]) for _ in range(3)))
                self.w("CLIST = nn.CellList([%s, %s])"
                       % tuple(net(["2.0", "-0.5", "1"]) for _ in range(2)))
        if r.random() < 0.35:
            env.closure = True
            self.w("")
            self.w("def _mk(k):")
            self.w("    def scale(t):")
            self.w("        return t * k")
            self.w("    def setk(v):")
            self.w("        nonlocal k")
            self.w("        k = v")
            self.w("    return scale, setk")
            self.w("")
            k0 = r.choice(["1.5", "2", "-1.0", "0.0"])
            self.w("CL, CL_SET = _mk(%s)" % k0)
            if r.random() < 0.4:
                env.closure2 = True
                self.w("CL2, CL2_SET = _mk(%s)" % (k0 if r.random() < 0.7 else "3.0"))
        if r.random() < 0.3:
            env.cll = True
            self.w("")
            self.w("def _mkl(*vals):")
            self.w("    items = list(vals)")
            self.w("")
            self.w("    def fold(t):")
            self.w("        for j, v in enumerate(items):")
            self.w("            t = t * v + j")
            self.w("        return t")
            self.w("    return fold, items")
            self.w("")
            self.w("CLL, CLL_ITEMS = _mkl(%s, %s, %s)" % tuple(r.choice(FLOAT_VALUES + INT_VALUES)
                                                          for _ in range(3)))
        if r.random() < 0.35:
            self.w("")
            self.w("def helper(a, b=%s, *rest, **kw):" % r.choice(["2.0", "1", "-0.5"]))
            # (callers may iterate G_L: a helper appending to it would never let them finish)
            self.out.extend(self.body([Var("a", "T"), Var("b", "N")], budget=r.randint(0, 2),
                                      allow_nested=False, frozen=("G_L",))[:-1])
            self.w("    r = a * b")
            self.w("    for e in rest:")
            self.w("        r = r + e")
            self.w("    return r - kw.get('c', 0.0)")
            env.helper = True
        if r.random() < 0.12:
            self.w("")
            self.w("def rec(t, n):")
            self.w("    return t if n <= 0 else rec(t * %s, n - 1) + 1.0"
                   % r.choice(["2.0", "-0.5"]))
            env.rec = True

    # ---- user classes whose instances the function makes (env.objs) -------------------------
    def objects_prelude(self):
        """Module-level classes with random shapes (all drawn from env.ro): Pt (an __init__ with
        positional, keyword, keyword-only, **kw or mutable-default parameters storing a tensor,
        a number and a list; a method with tensor arithmetic on attributes; a property with or
        without a setter and one without; a static and a class method; sometimes __call__);
        sometimes Sub(Pt) with super().__init__, Sl (__slots__), DC (a dataclass, sometimes
        frozen), Fn (__call__), W (__eq__ that raises or counts, __floor__/__index__/__float__,
        which capture must never run), Rf (a class capture refuses: __new__, __setattr__,
        __getattribute__, __del__, a metaclass __call__ or a C base). Outside places for them in
        programs that are not pure: G_OBJ, G_OBJS, HOLD (with HOLD.log)."""
        ro, env = self.ro, self.env
        env.objs = True
        pure = env.pure
        oc = env.oc = {
            "init": ro.choice(["plain", "kwonly", "kw"] + ([] if pure else ["mutdefault"] * 2)),
            "setter": ro.random() < 0.6, "call": ro.random() < 0.3,
            "count": not pure and ro.random() < 0.2,
            "sub": ro.random() < 0.6, "sl": ro.random() < 0.45,
            "dc": ro.random() < 0.4 and ro.choice(["plain", "plain", "order", "frozen"]),
            "fn": ro.random() < 0.4,
            "w": ro.random() < 0.3 and (ro.choice(["raise", "count"]) if not pure else "raise"),
            "rf": ro.random() < 0.2 and ro.choice(["new", "setattr", "getattribute", "del",
                                                   "meta", "cbase"]),
            "hold": not pure,
        }
        fv = lambda: ro.choice(FLOAT_VALUES + INT_VALUES)
        w = self.w
        w("")
        w("import dataclasses")
        w("")
        w("")
        w("class Pt(object):")
        w('    """Made inside the function: capture simulates __init__ on a scratch instance."""')
        w("    dims = %s" % fv())
        w("    w0 = pj.Tensor(%s)          # a tensor class attribute (changed in place by drive)"
          % ro.choice(FLOAT_VALUES))
        if oc["count"]:
            w("    made = 0")
        w("")
        bdef = ro.choice(["1.5", "2", "-0.5", "0.0"])
        sig = {"plain": "a, b=%s" % bdef, "kwonly": "a, b=%s, *, tag=%s" % (bdef, ro.choice(INT_VALUES)),
               "kw": "a, b=%s, **kw" % bdef, "mutdefault": "a, b=%s, items=[]" % bdef}[oc["init"]]
        w("    def __init__(self, %s):" % sig)
        w("        self.a = %s" % ro.choice(["a", "a", "a * 2.0", "a + 0.0", "ops.relu(a)"]))
        w("        self.b = %s" % ro.choice(["b", "b", "float(b)", "b * 1"]))
        w("        self.items = %s" % {"plain": ro.choice(["[]", "[b]"]), "kwonly": "[tag]",
                                       "kw": "list(kw.values())", "mutdefault": "items"}[oc["init"]])
        w("        self.n = 0")
        if oc["count"]:
            w("        Pt.made += 1")
        extra = ro.random()
        if extra < 0.15:
            w("        if self.b != self.b:")
            w("            raise ValueError('b is nan')")
        elif extra < 0.3:
            w("        self.c = self.half          # a property of the half-made object")
        elif extra < 0.4 and oc["hold"]:
            w("        HOLD.log.append(self)       # escapes from its own __init__")
        elif extra < 0.48 and not pure:
            w("        self.f = float(self.a.sum())  # a graph break in __init__ (half made)")
        w("")
        w("    def mix(self, t):")
        saved = env.objs
        env.objs = False              # no objects made inside the classes' own methods
        b = Body(ro, env, [Var("self.a", "T"), Var("self.b", "N"), Var("t", "T")],
                 indent="        ", budget=ro.randint(0, 2), allow_nested=False)
        b.block(0, b.budget)
        if b.globals_written:
            b.lines.insert(0, b.indent + "global " + ", ".join(sorted(b.globals_written)))
        self.out.extend(b.lines)
        w("        return %s" % b.e_T(2))
        env.objs = saved
        w("")
        w("    def bump(self, v):")
        w("        self.n += 1")
        w("        self.items.append(v)")
        w("        return len(self.items)")
        w("")
        w("    @property")
        w("    def total(self):")
        w("        return %s" % ro.choice(["self.a * self.b", "self.a + self.b", "self.a.sum() * self.b"]))
        if oc["setter"]:
            w("")
            w("    @total.setter")
            w("    def total(self, v):")
            w("        self.b = %s" % ro.choice(["v", "v - 1"]))
        w("")
        w("    @property")
        w("    def half(self):")
        w("        return self.b * 0.5")
        w("")
        w("    @staticmethod")
        w("    def unit():")
        w("        return %s" % fv())
        w("")
        w("    @classmethod")
        w("    def make(cls, t):")
        w("        return cls(t, %s)" % fv())
        if oc["call"]:
            w("")
            w("    def __call__(self, t):")
            w("        return t * self.b - self.a")
        w("")
        w("")
        w("_orig_mix, _orig_init = Pt.mix, Pt.__init__")
        w("")
        w("")
        w("def _alt_mix(self, t):")
        w("    return t - self.b")
        w("")
        w("")
        w("def _alt_init(self, a, *rest, **kw):")
        w("    _orig_init(self, a * 2.0, *rest, **kw)")
        w("    self.alt = True")
        w("")
        w("")
        w("def make_pt(t, b=%s):" % fv())
        w("    return Pt(t, b)")
        w("")
        w("")
        w("def use_obj(o, t):")
        w("    o.n += 1")
        w("    return o.mix(t) + o.b")
        w("")
        w("")
        w("def link(p, q):")
        w("    p.child = q")
        w("    return p")
        w("")
        w("")
        w("def each(lo):")
        w("    for e in lo:")
        w("        e.n += 1")
        w("        yield e")
        if oc["sub"]:
            w("")
            w("")
            w("class Sub(Pt):")
            w("    dims = %s" % fv())
            w("")
            w("    def __init__(self, a, b=%s, k=%s):" % (fv(), ro.choice(INT_VALUES)))
            w("        %s" % ro.choice(["super().__init__(a, b)", "super(Sub, self).__init__(a, b)",
                                        "Pt.__init__(self, a, b)"]))
            w("        self.k = k")
            w("")
            w("    def mix(self, t):")
            w("        return %s" % ro.choice(["super().mix(t) * self.k", "t * self.k + self.a",
                                               "Pt.mix(self, t) - self.b"]))
            w("")
            w("")
            w("_orig_sub_init = Sub.__init__")
            w("")
            w("")
            w("def _alt_sub_init(self, a, *rest, **kw):")
            w("    _orig_sub_init(self, a - 1.0, *rest, **kw)")
            w("    self.alt = False")
        if oc["sl"]:
            w("")
            w("")
            w("class Sl(object):")
            w("    __slots__ = ('u', 'v')")
            w("")
            w("    def __init__(self, u, v=None):")
            w("        self.u = u")
            w("        if v is not None:")
            w("            self.v = v")
            w("")
            w("    def get(self):")
            w("        return self.u * %s" % ro.choice(["2.0", "-1.0", "0.5"]))
        if oc["dc"]:
            w("")
            w("")
            w("@dataclasses.dataclass%s" % {"plain": "", "order": "(order=True)",
                                            "frozen": "(frozen=True)"}[oc["dc"]])
            w("class DC:")
            w("    s: float")
            w("    sh: float = %s" % fv())
            w("    tags: list = dataclasses.field(default_factory=list)")
            w("")
            w("    def scaled(self, t):")
            w("        return t * self.s + self.sh")
        if oc["fn"]:
            w("")
            w("")
            w("class Fn(object):")
            w("    def __init__(self, k, bias=0.0):")
            w("        self.k = k")
            w("        self.bias = bias")
            w("        self.calls = 0")
            w("")
            w("    def __call__(self, t):")
            w("        self.calls += 1")
            w("        return t * self.k + self.bias")
        if oc["w"]:
            count = oc["w"] == "count"
            w("")
            w("")
            w("class W(object):")
            w('    """Dunders that must run only where plain Python runs them (never at capture)."""')
            w("    evals = 0")
            w("")
            w("    def __init__(self, v):")
            w("        self.v = v")
            w("")
            w("    def __eq__(self, other):")
            if count:
                w("        W.evals += 1")
                w("        return isinstance(other, W) and self.v == other.v")
            else:
                w("        raise RuntimeError('W.__eq__ ran')")
            w("")
            w("    __hash__ = %s" % ro.choice(["object.__hash__", "None"]))
            w("")
            w("    def __floor__(self):")
            if count:
                w("        W.evals += 10")
            w("        return self.v + 3")
            w("")
            w("    def __index__(self):")
            if count:
                w("        W.evals += 100")
            w("        return self.v % 3")
            w("")
            w("    def __float__(self):")
            if count:
                w("        W.evals += 1000")
            w("        return self.v * 0.5")
        if oc["rf"]:
            v = oc["rf"]
            w("")
            w("")
            if v == "meta":
                w("class _Meta(type):")
                w("    def __call__(cls, *a, **k):")
                w("        return type.__call__(cls, *a, **k)")
                w("")
                w("")
            w("class Rf(%s):" % {"meta": "object, metaclass=_Meta", "cbase": "dict"}.get(v, "object"))
            w('    """A class capture refuses to make (%s): the function runs it eagerly."""' % v)
            w("    def __init__(self, a):")
            if v == "cbase":
                w("        dict.__init__(self, k=1)")
            w("        self.a = a")
            w("")
            w("    def get(self, t):")
            w("        return t + self.a")
            if v == "new":
                w("")
                w("    def __new__(cls, *a, **k):")
                w("        return object.__new__(cls)")
            elif v == "setattr":
                w("")
                w("    def __setattr__(self, k, v):")
                w("        object.__setattr__(self, k, v)")
            elif v == "getattribute":
                w("")
                w("    def __getattribute__(self, k):")
                w("        return object.__getattribute__(self, k)")
            elif v == "del":
                w("")
                w("    def __del__(self):")
                w("        pass")
        if oc["hold"]:
            w("")
            w("")
            w("class Holder(object):")
            w("    pass")
            w("")
            w("")
            w("HOLD = Holder()")
            w("HOLD.log = []")
            w("G_OBJ = None")
            w("G_OBJS = []")

    def obj_mutations(self):
        """Between calls: class attributes changed, methods replaced, properties added or
        replaced, __init__ swapped, outside places cleared, escaped objects changed (guards must
        notice each)."""
        ro, oc = self.ro, self.env.oc
        fv = lambda: ro.choice(FLOAT_VALUES + INT_VALUES)
        opts = ["Pt.dims = %s" % fv(), "Pt.mix = _alt_mix", "Pt.mix = _orig_mix",
                "Pt.extra = property(lambda self: 7.0, lambda self, v: None)",
                "if 'extra' in vars(Pt): del Pt.extra",
                "Pt.half = property(lambda self: -1.0)",
                "Pt.unit = staticmethod(lambda: %s)" % fv(),
                "Pt.__init__ = _alt_init", "Pt.__init__ = _orig_init",
                "Pt.make = classmethod(lambda cls, t: cls(t * 2.0, %s))" % fv(),
                "Pt.total = property(lambda self: self.a - self.b)",
                "Pt.bump = lambda self, v: -1",
                # what the class's functions hold, which its version tag does not cover
                "_orig_init.__defaults__ = (%s,%s)" % (fv(), " []" if oc["init"] == "mutdefault" else ""),
                "_orig_mix.__code__ = _alt_mix.__code__", "make_pt.__defaults__ = (%s,)" % fv(),
                "Pt.w0[...] = %s" % fv(), "Pt.w0 = pj.Tensor(%s)" % fv(),
                "Pt.w0 = pj.Tensor([%s, %s])" % (fv(), fv())]
        if oc["init"] == "kwonly":
            opts += ["_orig_init.__kwdefaults__ = {'tag': %s}" % ro.choice(INT_VALUES)]
        if oc["sub"]:
            opts += ["Sub.dims = %s" % fv(), "if 'dims' in vars(Sub): del Sub.dims",
                     "Sub.mix = _alt_mix", "Sub.__init__ = _alt_sub_init",
                     "Sub.__init__ = _orig_sub_init"]
        if oc["sl"]:
            opts += ["Sl.get = lambda self: self.u - 1.0"]
        if oc["dc"]:
            opts += ["DC.sh = %s" % fv(), "DC.scaled = lambda self, t: t - self.s"]
        if oc["fn"]:
            opts += ["Fn.__call__ = lambda self, t: t * 0.5 - self.k"]
        if oc["call"]:
            opts += ["Pt.__call__ = lambda self, t: t + self.b"]
        if oc["w"]:
            opts += ["W.__eq__ = lambda self, o: True", "W.__index__ = lambda self: 2",
                     "W.__float__ = lambda self: -0.0"]
        if oc["hold"]:
            opts += ["G_OBJ = None", "G_OBJS.clear()", "HOLD.__dict__.pop('o', None)",
                     "if G_OBJS: G_OBJS[0].b = %s" % fv(), "HOLD.log.reverse()",
                     "if isinstance(G_OBJ, Pt): G_OBJ.a = X",
                     "if hasattr(HOLD, 'o'): HOLD.o.n = %s" % fv()]
        return opts

    # ---- the function under test ------------------------------------------------------------
    def target(self):
        r = self.r
        c = r.random()
        params = [("x", "T")]
        for name, kind, p in (("y", "T", 0.5), ("l", "LN", 0.35), ("lt", "LT", 0.25),
                              ("rows", "LL", 0.15), ("d", "D", 0.25), ("p", "NT", 0.12),
                              ("n", "I", 0.35),
                              ("s", "N", 0.35)):
            if r.random() < p:
                params.append((name, kind))
        self.params = params
        self.defaults = {}
        if r.random() < 0.3 and params[-1][1] in ("N", "I"):
            self.defaults[params[-1][0]] = r.choice(["2", "0.5", "-0.0"])
        self.varargs = r.random() < 0.15
        self.varkw = r.random() < 0.15
        sig = []
        for name, kind in params:
            sig.append(name + ("=" + self.defaults[name] if name in self.defaults else ""))
        if self.varargs:
            sig.append("*args")
        self.kwonly = not self.varargs and r.random() < 0.15
        if self.kwonly:
            sig += ["*", "scale=%s" % r.choice(["1.0", "2", "-0.0"])]
        if "dunders" in self.env.fx:
            # a V passed in (drive() passes UA, a new one, or none: the default U0)
            sig += ([] if self.varargs or self.kwonly else ["*"]) + ["u=U0"]
        if self.varkw:
            sig.append("**kw")
        body_params = [Var(n, k) for n, k in params]
        if "dunders" in self.env.fx:
            body_params.append(Var("u", "VT"))
        if self.kwonly:
            body_params.append(Var("scale", "N"))
        if self.varargs:
            body_params.append(Var("list(args)", "LT"))
        if self.varkw:
            body_params.append(Var("kw", "D"))
        self.w("")
        if c < 0.15 and self.env.net and not self.varargs and not self.varkw:
            # Cell target: a second Cell class whose construct is the body.
            self.kind = "cell"
            self.w("")
            self.w("class Model(nn.Cell):")
            self.w("    def __init__(self):")
            self.w("        super().__init__()")
            self.w("        self.inner = Net()")
            self.w("        self.scale = %s" % r.choice(["2.0", "0.5", "3"]))
            self.w("")
            self.w("    def construct(self, %s):" % ", ".join(sig))
            extra = [Var("self.scale", "N"), Var("self.inner(x)", "T")]
            self.out.extend(self.body(body_params + extra, indent="        ", target=True))
            self.w("")
            self.w("MODEL = Model()")
            self.w("TARGET = MODEL")
        elif c < 0.25 and self.env.box:
            self.kind = "method"
            self.w("def _run(self, %s):" % ", ".join(sig))
            extra = [Var("self.w", "N"), Var("self.scale(x)", "T")]
            self.out.extend(self.body(body_params + extra, in_method="BOX", target=True))
            self.w("")
            self.w("Box.run = _run")
            self.w("TARGET = BOX.run")
        else:
            self.kind = "function"
            self.w("def f(%s):" % ", ".join(sig))
            self.out.extend(self.body(body_params, target=True))
            self.w("")
            self.w("TARGET = f")

    # ---- the driver -------------------------------------------------------------------------
    def drive(self):
        r, env = self.r, self.env
        self.w("")
        self.w("")
        self.w("def drive(call):")
        gl = [g for g in ("G_S", "G_N", "G_T") if g in env.globals]
        self.d_ordered = False
        gl += (["BOX"] if env.box else []) + (["NET"] if env.net else []) + \
            (["CL", "CL_SET"] if env.closure else [])
        if gl:
            self.w("    global " + ", ".join(gl))
        if env.objs and env.oc.get("hold"):
            self.w("    global G_OBJ")
        fglobals = gen_features.globals_written(self)
        if fglobals:
            self.w("    global " + ", ".join(fglobals))
        for line in gen_features.drive_setup(self):
            self.w("    " + line)
        shape = r.choice(SHAPES[:-1])
        dtypes = {name: pick_dtype(r) if name != "x" else "float32"
                  for name, kind in self.params if kind == "T"}
        persistent = {}
        for name, kind in self.params:
            if kind == "LN":
                self.w("    L = %s" % ("MyL([%s])" if r.random() < 0.15 else "[%s]")
                       % ", ".join(r.choice(FLOAT_VALUES + INT_VALUES)
                                   for _ in range(r.randint(1, 3))))
                persistent[name] = "L"
            elif kind == "LT":
                self.w("    LT = [%s]" % ", ".join(tensor_literal(r, shape, "float32")
                                                   for _ in range(r.randint(1, 2))))
                persistent[name] = "LT"
            elif kind == "D":
                form = r.choice(["{%s}", "{%s}", "MyD({%s})", "OrderedDict({%s})"])
                self.d_ordered = form.startswith("OrderedDict")
                self.w("    D = %s" % (form % ("'a': %s, 'b': %s" % (r.choice(FLOAT_VALUES),
                                                                   r.choice(INT_VALUES)))))
                persistent[name] = "D"
            elif kind == "LL":
                self.w("    RW = [[%s], [%s, %s]]" % (r.choice(INT_VALUES), r.choice(FLOAT_VALUES),
                                                     r.choice(INT_VALUES)))
                persistent[name] = "RW"
            elif kind == "NT":
                self.w("    PT = P(%s, %s)" % (r.choice(FLOAT_VALUES), r.choice(INT_VALUES)))
                persistent[name] = "PT"
        self.w("    X = %s" % tensor_literal(r, shape, "float32"))
        ncalls = r.randint(3, 6)
        for i in range(ncalls):
            args = []
            for name, kind in self.params:
                if kind == "T":
                    if name == "x" and r.random() < 0.6 or name == "y" and r.random() < 0.1:
                        args.append("X")
                    else:
                        odd = r.random() < 0.1          # a shape that may not broadcast
                        args.append(tensor_literal(r, r.choice(SHAPES) if odd else shape,
                                                   dtypes[name]))
                elif name in persistent:
                    # the same object again, or an equal fresh one (identity guards)
                    if kind == "LN" and r.random() < 0.15:
                        args.append("list(L)")
                    elif kind == "D" and r.random() < 0.15:
                        args.append("dict(D)")
                    else:
                        args.append(persistent[name])
                elif kind == "I":
                    if name in self.defaults and r.random() < 0.4:
                        continue
                    args.append(r.choice(["1", "2", "3", "0"]))
                elif kind == "N":
                    if name in self.defaults and r.random() < 0.4:
                        continue
                    v = r.choice(FLOAT_VALUES + INT_VALUES + ["True", "float('nan')"])
                    args.append(v)
            # keyword form for the tail sometimes (never when a default was skipped)
            text = []
            names = [n for n, _ in self.params]
            skipped = len(args) < len(self.params)
            kw_from = len(args) if skipped or r.random() < 0.7 else r.randint(1, len(args))
            for j, a in enumerate(args):
                text.append(a if j < kw_from else "%s=%s" % (names[j], a))
            if self.varargs and not any("=" in t for t in text) and not skipped:
                text += [tensor_literal(r, shape, "float32")
                         for _ in range(r.randint(0, 2))]
            if self.kwonly and r.random() < 0.6:
                text.append("scale=%s" % r.choice(FLOAT_VALUES + INT_VALUES + ["True"]))
            if self.varkw:
                text += ["k%s=%s" % (j, r.choice(FLOAT_VALUES)) for j in range(r.randint(0, 2))]
            text += gen_features.call_kwargs(self)
            self.w("    R = call(%s)" % ", ".join(text))
            if i == ncalls - 1:
                # the gradient of the outputs with respect to x: eagerly a tape; the jitted call
                # runs its graph as one node on the tape (graph/tape.h)
                if text and text[0] == "X" and r.random() < 0.35:
                    self.w("    R = (R, pj.grad(lambda X_: _tsum(call(%s)))(X))" % ", ".join(["X_"] + text[1:]))
                break
            for _ in range(r.randint(0, 2)):
                m = self.mutation(persistent, shape, dtypes)
                if m.startswith("shape:"):
                    shape = r.choice(SHAPES)
                    self.w("    X = %s" % tensor_literal(r, shape, dtypes["x"]))
                elif m.startswith("dtype:"):
                    n = m[len("dtype:"):]
                    dtypes[n] = pick_dtype(r)
                    if n == "x":
                        self.w("    X = %s" % tensor_literal(r, shape, dtypes["x"]))
                else:
                    self.w("    " + m)

    def mutation(self, persistent, shape, dtypes):
        r, env = self.r, self.env
        opts = ["shape:", "shape:"]
        opts += ["dtype:" + n for n in dtypes if n != "x" or r.random() < 0.3]
        opts += ["X.tag = %s" % r.choice(["1", "2.0"]), "X.__dict__.pop('tag', None)"]
        if "poke" not in env.disabled:
            opts += ["_poke(R)"] * 2
        opts += ["globals()[%r] = %s" % (r.choice(["len", "abs", "min", "max", "isinstance"]),
                                         r.choice(["lambda *a: 1", "lambda *a: -0.0"])),
                 "globals().pop(%r, None)" % r.choice(["len", "abs", "min", "max",
                                                       "isinstance", "G_S", "G_CNT"])]
        if env.subclass:
            opts += ["X = MyT(X)", "X = MyT(%s)" % tensor_literal(r, shape, dtypes["x"])]
        opts += ["X[0] = %s" % r.choice(["9.0", "-0.0", "float('nan')"])]
        if "G_S" in env.globals:
            opts += ["G_S = %s" % r.choice(["-0.0", "0.0", "float('nan')", "2", "2.0", "True",
                                            "-3.5", "1"])] * 2
        if "G_N" in env.globals:
            opts += ["G_N = %s" % r.choice(["0", "1", "4"])]
        if "G_T" in env.globals:
            opts += ["G_T = %s" % tensor_literal(r, r.choice([(3,), (1,), (2,)]), "float32"),
                     "G_T[0] = 7.0" if r.random() < 0.5 else "G_T[...] = 0.5"]
        if "G_L" in env.globals:
            opts += ["G_L.append(%s)" % r.choice(FLOAT_VALUES), "G_L[:1] = [-0.0]", "del G_L[-1:]"]
        if "G_D" in env.globals:
            opts += ["G_D['a'] = %s" % r.choice(FLOAT_VALUES + INT_VALUES),
                     "G_D['z'] = 1", "G_D.pop('b', None)"]
        if "G_SET" in env.globals:
            opts += ["G_SET.add(3)", "G_SET.discard(1)"]
        if "G_LOG" in env.globals:
            opts += ["G_LOG.clear()"]
        if "L" in persistent.values():
            opts += ["L.append(%s)" % r.choice(FLOAT_VALUES + INT_VALUES), "L[:1] = [%s]"
                     % r.choice(FLOAT_VALUES), "L.reverse()", "L.clear()" if r.random() < 0.3
                     else "L.insert(0, 1)"]
        if "LT" in persistent.values():
            opts += ["LT.append(%s)" % tensor_literal(r, shape, "float32"), "del LT[-1:]",
                     "LT[:1] = [e * 2.0 for e in LT[:1]]"]
        if "D" in persistent.values():
            opts += ["D['a'] = %s" % r.choice(FLOAT_VALUES), "D['c'] = 2", "D.pop('a', None)"]
        if "PT" in persistent.values():
            opts += ["PT = P(%s, %s)" % (r.choice(FLOAT_VALUES), r.choice(INT_VALUES)),
                     "PT = (%s, 1)" % r.choice(FLOAT_VALUES)]
        if "RW" in persistent.values():
            opts += ["RW[0].append(%s)" % r.choice(INT_VALUES), "RW.append([1.5])",
                     "RW[-1][0] = -0.0"]
        if env.box:
            # A new object under the old name: the old one dies, and the new one may get its
            # address (an identity guard must not take it for the old one).
            opts += ["BOX = Box(%s)" % r.choice(["1.5", "-0.0", "3"])]
            opts += ["BOX.w = %s" % r.choice(["-0.0", "3", "2.5", "float('nan')", "True"]),
                     "Box.k = %s" % r.choice(["0.5", "1", "-2.0"]),
                     "BOX.extra = %s" % r.choice(["1.0", "2"]),
                     "Box.scale = _alt_scale", "BOX.flag = True",
                     "BOX.k = %s" % r.choice(["5", "-0.0"]),
                     "BOX.scale = lambda t: t * 3.0", "BOX.__dict__.pop('extra', None)"]
        if env.net:
            opts += ["NET = Net()"]
            opts += ["NET.alpha = %s" % r.choice(["-0.0", "2", "1.5"]),
                     "NET.p.set_data(pj.ones_like(NET.p) * %s)" % r.choice(["2.0", "-1.0"])]
        if env.closure:
            opts += ["CL_SET(%s)" % r.choice(["-0.0", "3", "2.0", "True"])] * 2
            opts += ["CL, CL_SET = _mk(%s)" % r.choice(["-0.0", "3", "2.0", "1.5"])]
        if env.closure2:
            opts += ["CL2_SET(%s)" % r.choice(["5.0", "3", "-0.0"])] * 2
        if env.helper:
            opts += ["helper.__defaults__ = (%s,)" % r.choice(["5.0", "-1", "0.0"])]
        if self.kind == "cell":
            opts += ["MODEL.scale = %s" % r.choice(["1", "-0.0", "4.0"])]
        order = self.order_mutations(persistent)
        m = r.choice(order) if order and r.random() < 0.4 else r.choice(opts)
        fm = gen_features.mutation(self) if env.fx else None
        if fm:
            return fm
        if env.objs and self.ro.random() < 0.35:
            return self.ro.choice(self.obj_mutations())
        return m

    def order_mutations(self, persistent):
        """Changes a guard could miss: the order of a list, a dict or an OrderedDict changed in
        place (an OrderedDict's move_to_end changes neither the dict's version tag nor its hash
        table), values rebound under existing keys, instance dict keys deleted and re-added,
        __class__ switched, Cells replaced or reordered inside their containers."""
        r, env = self.r, self.env
        fv = lambda: r.choice(FLOAT_VALUES + INT_VALUES)
        opts = []
        if "G_OD" in env.globals:
            k = r.choice(["a", "b", "c"])
            opts += ["%r in G_OD and G_OD.move_to_end(%r)" % (k, k),
                     "%r in G_OD and G_OD.move_to_end(%r, last=False)" % (k, k),
                     "if G_OD: G_OD.move_to_end(next(iter(G_OD)))",
                     "if G_OD: G_OD.move_to_end(next(reversed(G_OD)), last=False)",
                     "if G_OD: G_OD.popitem(last=%s)" % r.choice(["False", "True"]),
                     "G_OD[%r] = G_OD.pop(%r, %s)" % (k, k, fv()),
                     "G_OD.update(%s)" % r.choice(["a=%s, b=%s" % (fv(), fv()),
                                                   "[('c', %s), ('a', %s)]" % (fv(), fv())]),
                     "G_OD.setdefault(%r, %s)" % (k, fv())]
        if "G_D" in env.globals:
            k = r.choice(["a", "b"])
            opts += ["G_D[%r] = G_D.pop(%r, %s)" % (k, k, fv()),
                     "G_D.setdefault(%r, %s)" % (r.choice(["a", "b", "c"]), fv()),
                     "G_D.clear(); G_D.update([('b', %s), ('a', %s)])" % (fv(), fv())]
        if "G_L" in env.globals:
            opts += ["G_L.sort()", "G_L.reverse()", "G_L[1:] = [%s, %s]" % (fv(), fv()),
                     "G_L.insert(0, %s)" % fv(), "G_L[:] = G_L[::-1]"]
        if env.cll:
            opts += ["CLL_ITEMS.sort()", "CLL_ITEMS.reverse()", "CLL_ITEMS.insert(0, %s)" % fv(),
                     "CLL_ITEMS[:] = CLL_ITEMS[::-1]", "CLL_ITEMS[1:2] = [%s, %s]" % (fv(), fv()),
                     "del CLL_ITEMS[:1]"]
        if "L" in persistent.values():
            opts += ["L.sort()", "L[:] = L[::-1] + [%s]" % fv()]
        if "LT" in persistent.values():
            opts += ["LT.reverse()", "LT[:] = LT[::-1]"]
        if "D" in persistent.values():
            opts += ["D['a'] = D.pop('a', %s)" % fv(), "D.setdefault('c', %s)" % fv()]
            if self.d_ordered:
                opts += ["'a' in D and D.move_to_end('a')",
                         "'b' in D and D.move_to_end('b', last=False)"]
        if env.box:
            opts += ["BOX.vals.sort()", "BOX.vals.reverse()",
                     "BOX.vals[:] = [%s, %s]" % (fv(), fv()), "BOX.vals.insert(0, %s)" % fv(),
                     "BOX.vals[1:2] = [%s, %s]" % (fv(), fv()),
                     "BOX.w = vars(BOX).pop('w')", "BOX.t = vars(BOX).pop('t')",
                     "del BOX.hits; BOX.hits = %s" % r.choice(["0", "2"]),
                     "BOX.__class__ = Box2", "BOX.__class__ = Box2", "BOX.__class__ = Box"]
        if env.net:
            opts += ["NET.__class__ = Net2", "NET.__class__ = Net",
                     "NET.alpha = vars(NET).pop('alpha')"]
        if env.seq:
            opts += ["SEQ[%d] = _net(%s)" % (r.choice([0, -1]), fv()),
                     "SEQ.append(_net(%s))" % fv(), "if len(SEQ) > 1: del SEQ[0]",
                     "SEQ._cells.move_to_end(next(iter(SEQ._cells)))",
                     "SEQ._cells.move_to_end(next(reversed(SEQ._cells)), last=False)",
                     "SEQ[0].alpha = %s" % fv(), "SEQ[-1] = NET",
                     "CLIST[0] = _net(%s)" % fv(), "CLIST.append(_net(%s))" % fv(),
                     "CLIST.insert(0, _net(%s))" % fv(),
                     "CLIST._cells.move_to_end(next(iter(CLIST._cells)))",
                     "CLIST[-1].alpha = %s" % fv(),
                     "SEQ[0].__class__ = %s" % r.choice(["Net", "Net2"])]
        if self.kind == "cell":
            # a child Cell rebound (its class, or the attribute itself)
            opts += ["MODEL.inner = %s()" % r.choice(["Net", "Net2"]),
                     "MODEL.inner.__class__ = %s" % r.choice(["Net", "Net2"])]
        return opts

    def build(self):
        self.globals_()
        self.w("")
        self.w("")
        self.w("def _poke(v):")
        self.w('    """The caller changes what it got back (a later call must not see it)."""')
        self.w("    if isinstance(v, pj.Tensor):")
        self.w("        v[...] = 100")
        self.w("    elif isinstance(v, list):")
        self.w("        for e in v:")
        self.w("            _poke(e)")
        self.w("        v.append(-1)")
        self.w("    elif isinstance(v, tuple):")
        self.w("        for e in v:")
        self.w("            _poke(e)")
        self.w("    elif isinstance(v, dict):")
        self.w("        for e in list(v.values()):")
        self.w("            _poke(e)")
        self.w("        v['poked'] = 1")
        if self.env.objs:
            self.w("    elif type(v).__module__ == __name__ and hasattr(v, '__dict__'):")
            self.w("        vars(v)['poked'] = 1")
        self.w("")
        self.w("")
        self.w("def _tsum(v):")
        self.w('    """The floating tensors in what a call returned, summed: what gradients are taken of."""')
        self.w("    if isinstance(v, pj.Tensor):")
        self.w("        return v.astype(pj.float32).sum() if v.dtype in (pj.float32, pj.float64) else pj.Tensor(0.0)")
        self.w("    items = v.values() if isinstance(v, dict) else v if isinstance(v, (tuple, list)) else ()")
        self.w("    total = pj.Tensor(0.0)")
        self.w("    for e in items:")
        self.w("        total = total + _tsum(e)")
        self.w("    return total")
        self.classes()
        self.target()
        self.drive()
        return "\n".join(self.out) + "\n"


FEATURES = ("cellwrite", "descriptor", "nested", "subclass", "poke", "objects") + gen_features.NAMES


def generate(seed, disabled=()):
    """The source of program `seed` (an int). disabled: names from FEATURES the program must not
    use (to look past a known defect that would otherwise be the first difference); the random
    stream is the same, so the programs are otherwise alike."""
    bad = set(disabled) - set(FEATURES)
    if bad:
        raise ValueError("unknown features %s (known: %s)" % (sorted(bad), ", ".join(FEATURES)))
    return Program(seed, disabled).build()


if __name__ == "__main__":
    import sys
    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
