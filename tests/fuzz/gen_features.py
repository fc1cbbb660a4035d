"""Program features of the fuzzer's generator (tests/fuzz/gen.py), each behind its own knob in
gen.py (the share of programs that have it) and drawn from a random stream of its own, so that a
program without a feature is exactly the program the generator made before the feature existed
(and --exceptions 0 etc. leaves the other features' programs alone):

- exceptions (gen.EXC_PROGRAM_P, run_fuzz.py --exceptions P): builtin exceptions and user ones
  (E(ValueError), E2(E) with an __init__ and an attribute, EK(KeyError)) raised with constant
  args in try/except/else/finally, in the function under test and in functions it calls
  (risky / careful / finisher, inlined), `except (A, B) as e`, e.args read, bare `raise`,
  `raise ... from e`, raises inside handlers (a __context__), nested try, exceptions raised by
  operations (1 / G_ZERO, {..}[G_KEY], int(G_STR), an index out of range, math.sqrt of a
  negative), assert with and without a message, return / break / continue inside try/finally
  (break and return inside finally too), exceptions escaping the function. Between calls drive()
  changes which branch raises (G_MODE, G_ZERO, G_KEY, G_STR, risky rebound).
- generators (gen.GEN_PROGRAM_P, --generators): generator functions with and without arguments
  and generators closing over the function's locals, consumed by for, next(g), next(g, default),
  list/tuple/sum/min/max/sorted/any/all, str.join, list.extend, zip/map/enumerate (mixed with
  lists), generator expressions, generators left unfinished (break, next once), yielding tensors,
  with try/finally around yield (closed early: the finally runs when plain Python drops them),
  raising ones, `yield from`. Between calls: G_GN, gten.__defaults__, gnum.__code__.
- contexts (gen.CTX_PROGRAM_P, --contexts): Mgr with __enter__/__exit__ (returning self or its
  value; __exit__ returning True / False / None / a condition on the type), exceptions raised in
  the body (caught outside, suppressed, propagated), return / break / continue inside with,
  nested with, contextlib.contextmanager functions with and without try/finally around the yield,
  enter/exit order logged (G_CLOG, or a list of the function's own in pure programs). Between
  calls: Mgr.__exit__ / __enter__ swapped, M_G.sup changed.
- dunders (gen.DUN_PROGRAM_P, --dunders): a class V with __add__/__radd__/__iadd__/__sub__/
  __mul__/__rmul__/__matmul__/__neg__/__eq__/__ne__/__lt__/__bool__/__len__/__getitem__/
  __setitem__/__iter__ (a generator, iter(list), or absent: the old protocol)/__contains__/
  __call__, some returning NotImplemented on conditions; VS(V) overriding the reflected methods
  (Python calls them first); operands mixing V with ints, floats and tensors; __bool__ that may
  return a non-bool (TypeError) and __len__ a negative number (ValueError); V objects passed in
  (f's keyword-only u, default U0) and made inside. Between calls: dunders replaced and deleted,
  the objects passed in changed.

Statements of a feature come before a body's statements with chance STMT_P each (outside the
body's budget); they nest ordinary random statements and each other's.
"""

NAMES = ("exceptions", "generators", "contexts", "dunders")
SALT = {"exceptions": 0xE6C, "generators": 0x6E7, "contexts": 0xC7E, "dunders": 0xD07}
STMT_P = 0.3              # chance of a statement of a feature before each statement
MUTATION_P = 0.3          # chance that a change between calls is one of a feature's

BUILTIN_CTORS = ["ValueError('bad', 1)", "ValueError(2)", "KeyError('k')", "KeyError",
                 "IndexError('idx', 3)", "ZeroDivisionError('z')", "TypeError('ty', 0.5)",
                 "RuntimeError('rt')", "LookupError('lk', -1)", "ValueError()"]
USER_CTORS = ["E('e', 4)", "E()", "E", "E2('e2', 5)", "E2(code=7)", "EK('ek')", "EK"]
BUILTIN_SPECS = ["ValueError", "KeyError", "IndexError", "LookupError", "Exception",
                 "ArithmeticError", "(ValueError, KeyError)", "(TypeError, ZeroDivisionError)",
                 "(RuntimeError, LookupError)", "AssertionError", "(AssertionError, IndexError)",
                 "(KeyError, ValueError, TypeError)"]
USER_SPECS = ["E", "E2", "EK", "(E, IndexError)", "(EK, E2)", "(E2, KeyError)"]


# Constructs that show a known open defect (the repro in found/) as the first difference of
# most programs that have them: left out unless WITH_OPEN (run_fuzz.py --with-open), so that the
# fixed budget of tests/python/test_fuzz.py looks past them. Remove an entry once it is fixed.
OPEN_DEFECTS = {
    # name: "found/_open_....py" (what the construct is, what goes wrong)
}
WITH_OPEN = False


def open_ok(name):
    assert name in OPEN_DEFECTS, name
    return WITH_OPEN


def streams(seed):
    import random
    return {n: random.Random(seed * 6007 + SALT[n]) for n in NAMES}


# ================================================================================================
# Statements (a mixin of gen.Body)
# ================================================================================================
class FeatureStatements(object):
    """Statements of the features a program has (env.fx), each drawn from its own stream."""

    def feature_top(self, depth):
        """At the top of a body: a list of the function's own for generators and managers to
        log to (pure programs change nothing outside)."""
        fx = self.env.fx
        if self.env.pure and ("generators" in fx or "contexts" in fx):
            self.emit(depth, "lg = []")
            self.bind("lg", "LG")

    def feature_stmts(self, depth):
        for name in NAMES:
            if name in self.env.fx and self.env.fr[name].random() < STMT_P:
                self.in_stream(name, getattr(self, "s_" + name), depth)

    def in_stream(self, name, fn, *a):
        saved, self.r = self.r, self.env.fr[name]
        try:
            return fn(*a)
        finally:
            self.r = saved

    def let(self, depth, prefix, kind, expr):
        """name = expr (expr made before the name is in scope); returns the name."""
        name = self.fresh_bind(prefix, kind)
        self.emit(depth, "%s = %s" % (name, expr))
        return name

    def sub_block(self, depth, n):
        """n ordinary random statements (outside the body's budget), in a scope of their own."""
        saved, self.budget = self.budget, n
        self.block(depth, n)
        self.budget = saved

    def feature_return(self, ret):
        """The function's last return: with the objects and logs of the features sometimes."""
        extra = []
        for kind, p in (("VT", 0.4), ("VN", 0.3), ("MG", 0.3), ("LG", 0.7)):
            vs = self.vars(kind)
            if vs and self.chance(p):
                extra.append(self.pick(vs))
        if not extra:
            return ret
        return "(%s), %s" % (ret, ", ".join(extra))

    # ---- shared pieces ----------------------------------------------------------------------
    def x_log(self):
        """Where managers and generators log: a global (programs with side effects) or the
        function's own list."""
        own = self.vars("LG")
        glob = "G_CLOG" if "contexts" in self.env.fx else "G_GLOG"
        if self.env.pure:
            return self.pick(own) if own else "[]"
        return self.pick([glob, glob] + own)

    def x_ctor(self):
        opts = list(BUILTIN_CTORS)
        if "exceptions" in self.env.fx:
            opts += USER_CTORS * 2
        return self.pick(opts)

    def x_spec(self):
        opts = list(BUILTIN_SPECS)
        if "exceptions" in self.env.fx:
            opts += USER_SPECS * 2
        return self.pick(opts)

    def x_exit(self, depth, allow_return=True):
        """An early exit where one is legal: return, break, continue (not continue in a finally
        clause on 3.7)."""
        exits = ["return %s" % self.obj_return(self.ret_expr())] if allow_return else []
        if self.loop_depth:
            exits += ["break"] + (["continue"] if self.loop_depth > self.finally_base else [])
        if exits:
            self.emit(depth, "if %s:" % self.e_B(1))
            self.emit(depth + 1, self.pick(exits))

    def x_acc_loop(self, depth, head, item, kind="T", brk=0.25):
        """acc = <kind>; for <item> in <head>: acc = acc + <item> (maybe break): binds acc."""
        acc = self.fresh("t" if kind == "T" else "n")
        self.emit(depth, "%s = %s" % (acc, self.e_T(0) if kind == "T" else self.e_N(0)))
        self.emit(depth, "for %s in %s:" % (item, head))
        self.emit(depth + 1, "%s = %s + %s" % (acc, acc, item))
        if self.chance(brk):
            self.emit(depth + 1, "if %s:" % self.pick(["%s" % self.e_B(0), "True"]))
            self.emit(depth + 2, "break")
        self.bind(acc, kind)
        return acc

    # ---- exceptions -------------------------------------------------------------------------
    def s_exceptions(self, depth):
        c = self.r.random()
        if c < 0.4 and depth < 4:
            return self.x_try(depth)
        if c < 0.55:
            return self.x_call(depth)
        if c < 0.66 and depth < 4:
            return self.x_loop_finally(depth)
        if c < 0.72:
            return self.x_assert(depth)
        if c < 0.8:
            return self.x_return_finally(depth)
        if c < 0.9:
            if self.chance(0.6):           # most inside a try (a raise escapes the others)
                self.emit(depth, "try:")
                self.scopes.append([])
                self.x_op_raise(depth + 1)
                self.scopes.pop()
                return self.x_handler(depth, self.pick(["ArithmeticError", "LookupError", "Exception",
                                                        "(ValueError, ZeroDivisionError)", self.x_spec()]))
            return self.x_op_raise(depth)
        self.emit(depth, "if %s:" % self.e_B(1))
        self.emit(depth + 1, "raise %s" % self.x_ctor())

    def x_mode(self):
        return self.pick(["G_MODE", "G_MODE", str(self.r.randint(0, 6)), self.e_I(0),
                          "G_MODE + 1", "(G_MODE if %s else 0)" % self.e_B(0)])

    def x_call(self, depth):
        self.let(depth, "t", "T", self.pick([
            "careful(%s, %s)" % (self.e_T(1), self.x_mode()),
            "careful(%s, %s)" % (self.e_T(1), self.x_mode()),
            "risky(%s, %s)" % (self.e_T(1), self.x_mode()),
            "risky(%s, 0)" % self.e_T(1),
            "finisher(%s, %s)" % (self.e_T(1), self.pick(["2", "3", "4", "G_MODE",
                                                         "min(%s, 5)" % self.e_I(0)]))]))

    def x_op_raise(self, depth, bind=True):
        """A statement whose operation may raise (bound to a number, or a tensor)."""
        ln, dn = self.vars("LN"), self.vars("D")
        opts = ["1 / G_ZERO", "%s // G_ZERO" % self.e_N(0), "%s %% G_ZERO" % self.e_N(0),
                "{'a': 1.0, 'b': 2}[G_KEY]", "int(G_STR)", "float(G_STR)",
                "[1.0, 2.0][%s]" % self.e_I(0), "math.sqrt(%s)" % self.e_N(0),
                "int(%s)" % self.e_N(0), "divmod(%s, G_ZERO)[1]" % self.e_N(0),
                "getattr(1.5, G_KEY)", "(10 ** 400) * 1.0 if G_MODE > 4 else 0.5",
                "{'a': 1.0}.get(G_KEY, 0.0) + {'b': 2.0}[G_KEY]",
                "sum([1 / G_ZERO for _ in range(2)])", "len([int(G_STR) for _ in range(2)])",
                "max(1 / (G_ZERO + e) for e in (0, 1))"]
        if ln:
            opts += ["%s[%s + 2]" % (self.pick(ln), self.e_I(0))]
        if dn:
            opts += ["%s[G_KEY]" % self.pick(dn)]
        if self.chance(0.2):
            # tensor operations whose error depends on shapes drive() changes between calls
            t = self.e_T(0)
            return self.let(depth, "t", "T", self.pick([
                "%s + pj.Tensor([1.0, 2.0, 3.0])" % t, "%s.reshape(2, -1)" % t,
                "ops.matmul(%s, %s)" % (t, t), "%s[2]" % t, "ops.cat((%s, %s[None]))" % (t, t),
                "%s * pj.ones((2, 1))" % t, "ops.stack([%s, %s.sum()])" % (t, t)]))
        e = self.pick(opts)
        if self.chance(0.2):
            self.let(depth, "t", "T", "%s * (%s)" % (self.e_T(1), e))
        else:
            self.let(depth, "n", "N", e)

    def x_assert(self, depth):
        msg = self.pick(["", ", 'assert %d' % 3", ", ('why', 2)", ", 'no'", ", E('in assert')"
                         if "exceptions" in self.env.fx else ", 'plain'"])
        if self.chance(0.5):
            self.emit(depth, "try:")
            self.emit(depth + 1, "assert %s%s" % (self.e_B(1), msg))
            self.emit(depth, "except AssertionError as %s:" % self.fresh("ae"))
            self.emit(depth + 1, "%s = %s" % (self.fresh("n"), self.e_N(0)))
        else:
            self.emit(depth, "assert %s%s" % (self.e_B(1), msg))

    def x_raise_site(self, depth):
        """Something that may raise, inside a try body."""
        c = self.r.random()
        if c < 0.3:
            self.emit(depth, "if %s:" % self.e_B(1))
            self.emit(depth + 1, "raise %s" % self.x_ctor())
        elif c < 0.33:
            self.emit(depth, "raise %s" % self.x_ctor())
        elif c < 0.35:
            self.emit(depth, "if %s:" % self.e_B(1))
            self.emit(depth + 1, "raise                 # no exception is being handled here")
        elif c < 0.5:
            self.x_call(depth)
        elif c < 0.68:
            self.x_op_raise(depth)
        elif c < 0.74:
            self.x_assert(depth)
        elif c < 0.84 and depth < 5:
            self.x_try(depth)
        elif c < 0.92 and "generators" in self.env.fx:
            self.x_acc_loop(depth, "graise(%s, %s)" % (self.e_T(1), self.x_mode()),
                            self.fresh("e"))
        elif "dunders" in self.env.fx and self.vars("VT"):
            self.let(depth, "n", "N", "len(%s)" % self.pick(self.vars("VT")))
        else:
            self.x_call(depth)

    def x_try(self, depth):
        self.emit(depth, "try:")
        self.scopes.append([])
        if self.chance(0.5):
            self.sub_block(depth + 1, 1)
        self.x_raise_site(depth + 1)
        if self.chance(0.35):
            self.sub_block(depth + 1, 1)
        if self.chance(0.15):
            self.x_exit(depth + 1)
        self.scopes.pop()
        if self.chance(0.2):
            return self.x_finally(depth)
        names = [self.x_handler(depth, self.x_spec()) for _ in range(self.r.randint(1, 2))]
        if self.chance(0.25):
            self.emit(depth, "else:")
            self.sub_block(depth + 1, 1)
        if self.chance(0.35):
            self.x_finally(depth)
        names = [e for e in names if e]
        if names and self.chance(0.3):
            # `except E as e` unbinds e when the handler ends (and never binds it if it did not run)
            n = self.fresh("n")
            self.d_try(depth, "%s = len(%s.args)" % (n, self.pick(names)),
                       self.pick(["NameError", "UnboundLocalError"]), "%s = -1" % n)
            self.bind(n, "N")

    def x_return_finally(self, depth):
        """return of a list the finally clause appends to (the caller sees the append)."""
        lst = self.fresh("ln")
        self.emit(depth, "%s = [%s]" % (lst, self.e_N(0)))
        self.emit(depth, "try:")
        self.emit(depth + 1, "if %s:" % self.e_B(1))
        self.emit(depth + 2, "return (%s), %s" % (self.ret_expr(), lst))
        self.emit(depth + 1, "%s.append(%s)" % (lst, self.e_N(0)))
        self.x_raise_site(depth + 1) if self.chance(0.3) else None
        self.emit(depth, "finally:")
        self.emit(depth + 1, "%s.append(%s)" % (lst, self.pick(["-1", "len(%s)" % lst, self.e_N(0)])))
        self.bind(lst, "LN")
        self.owned.add(lst)

    def x_finally(self, depth):
        self.emit(depth, "finally:")
        saved, self.finally_base = self.finally_base, self.loop_depth
        if not self.env.pure and self.chance(0.4):
            self.emit(depth + 1, "G_ELOG.append(%s)" % self.pick(["'fin'", self.e_N(0), "len(G_ELOG)"]))
        else:
            self.sub_block(depth + 1, 1)
        if self.chance(0.1):
            # return / break in a finally clause swallow the exception in flight
            self.x_exit(depth + 1)
        self.finally_base = saved

    def x_handler(self, depth, spec):
        e = self.fresh("ex") if self.chance(0.75) else None
        self.emit(depth, "except %s%s:" % (spec, " as %s" % e if e else ""))
        self.scopes.append([])
        if e:
            opts = [("N", "len(%s.args)" % e), ("N", "len(str(%s))" % e),
                    ("N", "isinstance(%s, %s)" % (e, self.x_spec())),
                    ("N", "(%s.args + (0,))[0] if isinstance((%s.args + (0,))[0], (int, float)) "
                     "else -1" % (e, e)),
                    ("T", "%s * len(%s.args)" % (self.e_T(1), e))]
            if "exceptions" in self.env.fx:
                opts += [("N", "getattr(%s, 'code', -2)" % e),
                         ("N", "(sys.exc_info()[1] is %s)" % e),
                         ("N", "len(sys.exc_info()[1].args) + (sys.exc_info()[0] is type(%s))" % e)]
            if not self.env.pure:
                opts += [(None, "G_ELOG.append('%%s %%r' %% (type(%s).__name__, %s.args))" % (e, e)),
                         (None, "G_ELOG.append(repr(%s))" % e)] * 2
            kind, text = self.pick(opts)
            if kind:
                self.let(depth + 1, kind.lower(), kind, text)
            else:
                self.emit(depth + 1, text)
        else:
            self.emit(depth + 1, "pass")
        c = self.r.random()
        if c < 0.15:
            self.emit(depth + 1, "if %s:" % self.e_B(1))
            self.emit(depth + 2, "raise")
        elif c < 0.25 and e:
            self.emit(depth + 1, "if %s:" % self.e_B(1))
            self.emit(depth + 2, "raise %s from %s" % (self.x_ctor(), e))
        elif c < 0.32:
            self.emit(depth + 1, "if %s:" % self.e_B(1))
            self.emit(depth + 2, "raise %s" % self.x_ctor())
        if self.chance(0.5):
            self.sub_block(depth + 1, 1)
        self.scopes.pop()
        return e

    def x_loop_finally(self, depth):
        acc, k = self.fresh("t"), self.fresh("k")
        self.emit(depth, "%s = %s" % (acc, self.e_T(1)))
        self.emit(depth, "for %s in range(%s):" % (k, self.pick(["2", "3", "4", "G_MODE"])))
        self.bind(acc, "T")
        self.scopes.append([])
        self.bind(k, "I")
        self.loop_depth += 1
        self.emit(depth + 1, "try:")
        self.emit(depth + 2, "if %s == %d:" % (k, self.r.randint(0, 3)))
        self.emit(depth + 3, self.pick(["break", "continue", "continue",
                                        "return %s" % self.obj_return(self.ret_expr())]))
        self.emit(depth + 2, "%s = %s + %s" % (acc, acc, self.pick([k, self.e_T(0), self.e_N(0)])))
        if self.chance(0.4):
            self.scopes.append([])
            self.x_raise_site(depth + 2)
            self.scopes.pop()
        if self.chance(0.4):
            self.x_handler(depth + 1, self.x_spec())
        self.emit(depth + 1, "finally:")
        saved, self.finally_base = self.finally_base, self.loop_depth
        self.emit(depth + 2, self.pick(["%s = %s * 0.5" % (acc, acc), "%s = %s - %s" % (acc, acc, k)]
                                       + ([] if self.env.pure else ["G_ELOG.append(%s)" % k])))
        if self.chance(0.15):
            self.emit(depth + 2, "if %s == %d:" % (k, self.r.randint(1, 3)))
            self.emit(depth + 3, "break")
        self.finally_base = saved
        self.loop_depth -= 1
        self.scopes.pop()

    # ---- generators -------------------------------------------------------------------------
    def s_generators(self, depth):
        c = self.r.random()
        T = lambda: self.e_T(1)
        if c < 0.2:
            head = self.pick(["gten(%s, %s)" % (T(), self.pick(["2", "3", "G_GN"])),
                              "gten(%s)" % T(), "gfrom(%s)" % T(), "gglob(%s)" % T(),
                              "gfin(%s, %s)" % (T(), self.x_log()), "gnum_t(%s)" % T(),
                              "gdeleg(%s)" % T(), "gret(%s)" % T(),
                              "(e * 2.0 for e in %s)" % self.e_LT(0),
                              "map(lambda e: e * 0.5, gten(%s, 2))" % T(),
                              "(a - b for a, b in zip(gten(%s, 3), %s))" % (T(), self.e_LT(0))])
            return self.x_acc_loop(depth, head, self.fresh("e"), "T", brk=0.35)
        if c < 0.25:
            return self.x_acc_loop(depth, "gnum(%s)" % self.pick(["3", "G_GN"]), self.fresh("e"),
                                   "N", brk=0.3)
        if c < 0.3:
            # an endless generator left suspended by a break
            acc, e = self.fresh_bind("n", "N"), self.fresh("e")
            self.emit(depth, "%s = 0" % acc)
            self.emit(depth, "for %s in gcount(%s):" % (e, self.e_I(0)))
            self.emit(depth + 1, "%s = %s + %s" % (acc, acc, e))
            self.emit(depth + 1, "if %s >= %d or %s:" % (e, self.r.randint(1, 4), self.e_B(0)))
            return self.emit(depth + 2, "break")
        if c < 0.42:
            g = self.fresh("g")
            self.emit(depth, "%s = %s" % (g, self.pick([
                "gten(%s, %s)" % (T(), self.pick(["2", "3"])), "gfrom(%s)" % T(),
                "gfin(%s, %s)" % (T(), self.x_log()), "(e + 1.0 for e in gten(%s))" % T(),
                "iter(gten(%s, 2))" % T()])))
            self.let(depth, "t", "T", "next(%s)" % g)
            if self.chance(0.3):
                # the generator half consumed across a graph break
                self.let(depth, "n", "N", self.pick(["float(%s.sum())" % self.vars("T")[-1],
                                                     "bool((%s > 0).any())" % self.vars("T")[-1]]))
            if self.chance(0.6):
                self.let(depth, "t", "T", "next(%s, %s)" % (g, T()))
            if self.chance(0.3):
                self.emit(depth, "%s.close()" % g)
            elif self.chance(0.3):
                self.emit(depth, "%s = None" % g)       # dropped: a finally in it runs here
            return
        if c < 0.6:
            G = "gnum(%s)" % self.pick(["3", "2", "G_GN"])
            ln = self.vars("LN") or ["[1.0, -2.0]"]
            return self.let(depth, "n", "N", self.pick([
                "sum(%s)" % G, "max(%s, default=-1)" % G, "min(%s)" % G,
                "sorted(%s, reverse=True)[0]" % G, "any(e > 1 for e in %s)" % G, "all(%s)" % G,
                "len(list(%s))" % G, "len(tuple(%s))" % G,
                "len('-'.join(str(e) for e in %s))" % G, "next(gnum(3))",
                "next(gcount(%s))" % self.e_I(0), "next((e for e in %s if e > 0), -1)" % self.pick(ln),
                "sum(e for e in %s if e)" % self.pick(ln), "max((e * 2 for e in %s), default=0)"
                % self.pick(ln), "sum(k * e for k, e in enumerate(%s))" % G,
                "sum(a * b for a, b in zip(%s, %s))" % (G, self.pick(ln)),
                "len(dict(zip('abc', %s)))" % G, "sum(map(abs, %s))" % G]))
        if c < 0.75:
            kind = self.pick(["LT", "LT", "T", "TUP"])
            if kind == "LT":
                lt = self.let(depth, "lt", "LT", self.pick([
                    "list(gten(%s, 2))" % T(), "list(gfrom(%s))" % T(),
                    "[a + b for a, b in zip(gten(%s, 3), %s)]" % (T(), self.e_LT(0)),
                    "list(map(lambda e: e - 1.0, gfrom(%s)))" % T(),
                    "[e * k for k, e in enumerate(gten(%s, 3))]" % T(),
                    "sorted(gnum_t(%s), key=lambda e: e.ndim)" % T(),
                    "[e for e in gglob(%s)]" % T(), "list(e * 2.0 for e in %s)" % self.e_LT(0),
                    "list(gfin(%s, %s))" % (T(), self.x_log())]))
                self.owned.add(lt)
                return
            if kind == "T":
                return self.let(depth, "t", "T", self.pick([
                    "sum(gten(%s, 2))" % T(), "drain(gten(%s, 3))" % T(), "drain(gfrom(%s))" % T(),
                    "sum(e.sum() for e in gten(%s))" % T(), "drain(e * 0.5 for e in %s)" % self.e_LT(0),
                    "sum(gglob(%s), %s)" % (T(), T()), "drain(gfin(%s, %s))" % (T(), self.x_log())]))
            tp = self.let(depth, "tp", "TUP", "tuple(%s)" % self.pick(["gten(%s, 2)" % T(),
                                                                       "gfrom(%s)" % T()]))
            return self.let(depth, "t", "T", "%s[%s]" % (tp, self.pick(["0", "-1", "1"])))
        if c < 0.78:
            # lazy: made before the list grows and a name it reads is rebound; run after
            lts = [l for l in self.vars("LT") if l in self.owned and l not in self.frozen
                   and "(" not in l]
            nums = [v for v in self.targets("N") if v.startswith("n")]
            if not lts:
                return self.s_generators(depth)
            lt, g = self.pick(lts), self.fresh("g")
            k = self.pick(nums) if nums else None
            self.emit(depth, "%s = %s" % (g, self.pick([
                "(e * %s for e in %s)" % (k or "2.0", lt),
                "map(lambda e: e + %s, %s)" % (k or "1.0", lt),
                "(a - b for a, b in zip(%s, gten(%s, 3)))" % (lt, self.e_T(0)),
                "(e * j for j, e in enumerate(%s))" % lt])))
            self.emit(depth, "%s.append(%s)" % (lt, self.e_T(1)))
            if k and self.chance(0.6):
                self.emit(depth, "%s = %s + 1" % (k, k))
            return self.let(depth, "t", "T", self.pick(["drain(%s)" % g, "sum(%s)" % g,
                                                        "list(%s)[-1]" % g]))
        if c < 0.82:
            lts = [l for l in self.vars("LT") if l in self.owned and l not in self.frozen
                   and "(" not in l]
            lns = [l for l in self.vars("LN") if l in self.owned and l not in self.frozen
                   and "(" not in l] if self.env.pure else \
                [l for l in self.vars("LN") if l not in self.frozen and "(" not in l]
            if lts and self.chance(0.6):
                return self.emit(depth, "%s.extend(%s)" % (self.pick(lts), self.pick(
                    ["gten(%s, 2)" % T(), "gfrom(%s)" % T(), "(e + 1.0 for e in gten(%s))" % T()])))
            if lns:
                return self.emit(depth, "%s.extend(gnum(%s))" % (self.pick(lns), self.pick(["2", "G_GN"])))
            return self.s_generators(depth)
        if c < 0.9:
            # a generator closing over the function's locals (read when it runs, not when made)
            g = self.fresh("gl")
            src = self.pick(self.vars("LT") + ["(%s, %s)" % (self.e_T(0), self.e_T(0))])
            nums = [v for v in self.vars("N") if v.startswith("n")]
            k = self.pick(nums) if nums else self.e_N(0)
            self.emit(depth, "def %s(m=%s):" % (g, self.pick(["0.5", "2", "-1.0"])))
            self.emit(depth + 1, "for e in %s:" % src)
            self.emit(depth + 2, "yield e * %s + m" % k)
            if self.chance(0.3):
                self.emit(depth + 2, "if m < 0:")
                self.emit(depth + 3, "return")
            if nums and self.chance(0.4):
                self.emit(depth, "%s = %s + 1" % (k, k))     # after: the generator sees it
            return self.let(depth, "t", "T", self.pick(
                ["sum(%s())" % g, "drain(%s(3))" % g, "next(%s())" % g,
                 "sum(%s(-2.0), %s)" % (g, self.e_T(0)), "list(%s())[-1]" % g]))
        # a raising generator, caught here or not
        wrap = self.chance(0.6)
        d = depth
        if wrap:
            self.emit(depth, "try:")
            d = depth + 1
            self.scopes.append([])
        self.x_acc_loop(d, self.pick(["graise(%s, %s)" % (T(), self.pick(["0", "1", "G_GN", self.e_I(0)])),
                                      "gstop(%s)" % T()]), self.fresh("e"))
        if wrap:
            self.scopes.pop()
            ex = self.fresh("ex")
            self.emit(depth, "except %s as %s:" % (self.pick(["ValueError", "Exception", "(ValueError, KeyError)",
                                                              "RuntimeError"]), ex))
            self.emit(depth + 1, "%s = len(%s.args)" % (self.fresh("n"), ex))

    # ---- context managers -------------------------------------------------------------------
    def s_contexts(self, depth):
        c = self.r.random()
        if c < 0.45:
            return self.c_with(depth, self.c_manager(), nested=depth < 3 and self.chance(0.3))
        if c < 0.6:
            return self.c_with(depth, self.pick(["cm(%s, %s)" % (self.e_T(1), self.x_log()),
                                                 "cmf(%s, %s)" % (self.e_T(1), self.x_log())]),
                               as_kind="T")
        if c < 0.72:
            return self.c_with(depth, "M_G", as_kind="MG" if self.env.fxv["ctx_enter"] == "self"
                               else "T")
        if c < 0.85 and depth < 3:
            k = self.fresh("k")
            self.emit(depth, "for %s in range(%s):" % (k, self.pick(["2", "3"])))
            self.scopes.append([])
            self.bind(k, "I")
            self.loop_depth += 1
            self.c_with(depth + 1, self.c_manager())
            self.loop_depth -= 1
            self.scopes.pop()
            return
        # suppressed or not, caught outside
        self.emit(depth, "try:")
        self.scopes.append([])
        self.c_with(depth + 1, self.pick([self.c_manager(), "cmf(%s, %s)" % (self.e_T(1), self.x_log())]),
                    raise_p=0.8)
        self.scopes.pop()
        ex = self.fresh("ex")
        self.emit(depth, "except %s as %s:" % (self.x_spec(), ex))
        if not self.env.pure:
            self.emit(depth + 1, "G_CLOG.append('caught ' + type(%s).__name__)" % ex)
        else:
            self.emit(depth + 1, "%s = len(%s.args)" % (self.fresh("n"), ex))

    def c_manager(self):
        # what __exit__ returns (its truth suppresses), or 'boom' / 'enter': they raise
        sup = self.pick(["False", "False", "True", "None", self.e_B(0), "1", "0", "[]", "'yes'"]
                        if self.chance(0.95) else ["'boom'", "'enter'"])
        return "Mgr(%s, %s, %s, %r)" % (self.pick([self.e_T(1), self.e_T(0)]), sup,
                                        self.pick([self.x_log(), "None"]), self.fresh("m"))

    def c_with(self, depth, mgr, nested=False, as_kind=None, raise_p=0.35):
        if as_kind is None:
            as_kind = "MG" if self.env.fxv["ctx_enter"] == "self" else "T"
        m = self.fresh("m")
        items = ["%s as %s" % (mgr, m)]
        if nested and not self.chance(0.5):
            m2 = self.fresh("m")
            items.append("%s as %s" % (self.c_manager(), m2))
            self.emit(depth, "with %s:" % ", ".join(items))
            self.bind(m2, "MG" if self.env.fxv["ctx_enter"] == "self" else "T")
        else:
            self.emit(depth, "with %s:" % items[0])
        self.bind(m, as_kind)
        d = depth + 1
        self.scopes.append([])
        if nested and len(items) == 1:
            m2 = self.fresh("m")
            self.emit(d, "with %s as %s:" % (self.c_manager(), m2))
            self.bind(m2, "MG" if self.env.fxv["ctx_enter"] == "self" else "T")
            d += 1
        # (drive() may swap Mgr.__enter__: then the value is the other one)
        use = ("%s.v" % m if self.chance(0.2) else "(%s.v if isinstance(%s, Mgr) else %s)" % (m, m, m)) \
            if as_kind == "MG" else m
        self.let(d, "t", "T", self.pick(
            ["%s * 2.0" % use, "%s + %s" % (use, self.e_T(0)), "ops.relu(%s)" % use]))
        if self.chance(0.5):
            self.sub_block(d, 1)
        if self.chance(raise_p):
            self.emit(d, "if %s:" % self.e_B(1))
            self.emit(d + 1, "raise %s" % self.x_ctor())
        if self.chance(0.2):
            self.x_exit(d)
        self.scopes.pop()

    # ---- user-class operators ---------------------------------------------------------------
    def s_dunders(self, depth):
        vs = self.vars("VT") + self.vars("VN")
        c = self.r.random()
        if not vs or c < 0.2:
            return self.d_make(depth)
        if c < 0.45:
            return self.d_arith(depth)
        if c < 0.6:
            return self.d_truth(depth)
        if c < 0.78:
            return self.d_container(depth)
        if c < 0.92:
            return self.d_compare(depth)
        u = self.pick(vs)
        if u in self.vars("VT"):
            self.emit(depth, "%s = %s.v" % (self.fresh_bind("t", "T"), u))
        else:
            self.emit(depth, "%s = %s.v" % (self.fresh_bind("n", "N"), u))

    def d_operand(self, tensor_ok=True):
        """(text, kind) of an operand: a V (VT/VN), a number (N) or a tensor (T)."""
        vs = [(v, "VT") for v in self.vars("VT")] + [(v, "VN") for v in self.vars("VN")]
        c = self.r.random()
        if vs and c < 0.55:
            return self.pick(vs)
        if c < 0.65:
            return self.d_new()
        if c < 0.85 or not tensor_ok:
            return self.e_N(0), "N"
        return self.e_T(0), "T"

    def d_new(self):
        cls = self.pick(["V", "V", "VS"])
        n = self.pick(["", ", %s" % self.pick(["-1", "0", "1", "2", "3"]), ", %s" % self.e_I(0)])
        if self.chance(0.6):
            return "%s(%s%s)" % (cls, self.e_T(1), n), "VT"
        return "%s(%s%s)" % (cls, self.e_N(0), n), "VN"

    def d_make(self, depth):
        e, kind = self.d_new()
        u = self.fresh_bind("u", kind)
        self.owned.add(u)
        self.emit(depth, "%s = %s" % (u, e))

    def d_try(self, depth, line, excs, fallback):
        self.emit(depth, "try:")
        self.emit(depth + 1, line)
        self.emit(depth, "except %s:" % excs)
        self.emit(depth + 1, fallback)

    def d_arith(self, depth):
        a, ka = self.d_operand()
        if ka not in ("VT", "VN"):
            a, ka = self.pick([(v, "VT") for v in self.vars("VT")] + [(v, "VN") for v in self.vars("VN")])
        b, kb = self.d_operand()
        op = self.pick(["+", "+", "-", "*", "*", "@", "neg", "iadd", "sum"])
        vkind = "VT" if "T" in (ka[-1], kb[-1]) else "VN"
        if op == "neg":
            e, kind = "-%s" % a, ka
        elif op == "@":
            e, kind = "%s @ %s" % (a, b), "T" if vkind == "VT" else "N"
        elif op == "sum":
            e, kind = "sum([%s, %s])" % (a, b) if kb in ("VT", "VN") else "sum([%s, %s])" % (a, a), \
                ka if kb not in ("VT", "VN") else vkind
        elif op == "iadd":
            if (self.env.pure and a not in self.owned) or "(" in a:
                e, kind = "%s + %s" % (a, b), vkind
            else:
                # in place: the name, an item of a list holding it, or its attribute
                line = self.pick(["%s += %s" % (a, b), "%s += %s" % (a, b),
                                  "_h = [%s]; _h[0] += %s; %s = _h[0]" % (a, b, a),
                                  "%s.v += %s" % (a, self.e_N(0))])
                if self.chance(0.5):
                    return self.d_try(depth, line, "TypeError", "%s = V(%s)" % (a, self.e_T(0)
                                                                             if ka == "VT" else self.e_N(0)))
                return self.emit(depth, line)
        else:
            e, kind = ("%s %s %s" % (a, op, b)) if self.chance(0.6) else ("%s %s %s" % (b, op, a)), vkind
        fb = {"VT": lambda: "V(%s)" % self.e_T(0), "VN": lambda: "V(%s)" % self.e_N(0),
              "T": lambda: self.e_T(0), "N": lambda: self.e_N(0)}[kind]()
        name = self.fresh_bind("u" if kind in ("VT", "VN") else ("t" if kind == "T" else "n"), kind)
        if kind in ("VT", "VN"):
            self.owned.add(name)
        if self.chance(0.7):
            self.d_try(depth, "%s = %s" % (name, e), self.pick(["TypeError", "(TypeError, ValueError)"]),
                       "%s = %s" % (name, fb))
        else:
            self.emit(depth, "%s = %s" % (name, e))

    def d_truth(self, depth):
        u = self.pick(self.vars("VT") + self.vars("VN"))
        c = self.r.random()
        if c < 0.35:
            n = self.fresh("n")
            e = self.pick(["len(%s)" % u, "bool(%s)" % u, "(not %s)" % u, "(1 if %s else 0)" % u,
                           "int(bool(%s or 0))" % u,
                           "len([%s, %s]) + len(%s)" % (u, u, u)])
            self.d_try(depth, "%s = %s" % (n, e), self.pick(["(TypeError, ValueError)", "TypeError",
                                                           "ValueError"]), "%s = -1" % n)
            self.bind(n, "N")
            return
        wrap = self.chance(0.6)
        d = depth
        if wrap:
            self.emit(depth, "try:")
            d += 1
        self.emit(d, "if %s:" % self.pick([u, "not %s" % u, "%s and %s" % (u, self.e_B(0)),
                                            "len(%s) > 1" % u]))
        self.scopes.append([])
        self.sub_block(d + 1, 1)
        self.scopes.pop()
        if wrap:
            self.emit(depth, "except %s as %s:" % (self.pick(["(TypeError, ValueError)", "TypeError",
                                                              "Exception"]), self.fresh("ex")))
            self.scopes.append([])
            self.sub_block(depth + 1, 1)
            self.scopes.pop()

    def d_container(self, depth):
        vt, vn = self.vars("VT"), self.vars("VN")
        u = self.pick(vt + vn)
        ek = "T" if u in vt else "N"
        c = self.r.random()
        fb = self.e_T(0) if ek == "T" else self.e_N(0)
        if c < 0.2:
            name = self.fresh("t" if ek == "T" else "n")
            self.d_try(depth, "%s = %s[%s]" % (name, u, self.pick(["0", "1", "2", self.e_I(0)])),
                       "IndexError", "%s = %s" % (name, fb))
            self.bind(name, ek)
        elif c < 0.3 and (not self.env.pure or u in self.owned) and "(" not in u:
            self.emit(depth, "%s[%s] = %s" % (u, self.pick(["0", "1", self.e_I(0)]), self.e_N(0)))
        elif c < 0.5:
            acc, e = self.fresh("t" if ek == "T" else "n"), self.fresh("e")
            self.emit(depth, "%s = %s" % (acc, fb))
            self.emit(depth, "for %s in %s:" % (e, u))
            self.emit(depth + 1, "%s = %s + %s" % (acc, acc, e))
            if self.chance(0.3):
                self.emit(depth + 1, "break")
            self.bind(acc, ek)
        elif c < 0.62:
            n = self.fresh("n")
            self.d_try(depth, "%s = %s in %s" % (n, self.pick([self.e_N(0), "2", "0", u]), u),
                       "(TypeError, ValueError)", "%s = None" % n)
            self.bind(n, "N")
        elif c < 0.75:
            name = self.fresh_bind("lt" if ek == "T" else "ln", "LT" if ek == "T" else "LN")
            self.owned.add(name)
            self.d_try(depth, "%s = %s" % (name, self.pick(["list(%s)" % u, "[e for e in %s]" % u,
                                                            "list(reversed(list(%s)))" % u])),
                       "(TypeError, ValueError)", "%s = []" % name)
        elif c < 0.9:
            self.let(depth, "t", "T", "%s(%s)" % (u, self.e_T(1)))
        else:
            n = self.fresh_bind("n", "N")
            self.d_try(depth, "%s = sum(1 for _ in %s)" % (n, u), "(TypeError, ValueError)", "%s = -1" % n)

    def d_compare(self, depth):
        vs = self.vars("VT") + self.vars("VN")
        u = self.pick(vs)
        w = self.pick(vs + [self.d_new()[0]])
        n = self.fresh("n")
        e = self.pick(["(%s == %s)" % (u, w), "(%s != %s)" % (u, w), "(%s < %s)" % (u, w),
                       "(%s < %s)" % (u, self.e_N(0)), "(%s > %s)" % (self.e_N(0), u),
                       "(%s in [%s, 5])" % (u, w), "[%s, %s].index(%s)" % (w, u, u),
                       "[%s, %s].count(%s)" % (u, w, u), "sorted([%s, %s])[0].n" % (u, w),
                       "max([%s, %s]).n" % (u, w), "min(%s, %s).n" % (w, u),
                       "(%s == %s)" % (u, self.e_T(0)), "(%s == %s)" % (self.e_N(0), u)])
        self.d_try(depth, "%s = %s" % (n, e), self.pick(["TypeError", "(TypeError, ValueError)"]),
                   "%s = -1" % n)
        self.bind(n, "N")


# ================================================================================================
# Module preludes and changes between calls (gen.Program)
# ================================================================================================
def prelude(p, name):
    """Writes the module-level code of feature `name` (classes, helpers, globals) into p."""
    r = p.env.fr[name]
    w = p.w
    pure = p.env.pure
    w("")
    w("")
    if name == "exceptions":
        w("import sys")
        w("")
        w("")
        w("class E(ValueError):")
        w('    """A user exception (a ValueError)."""')
        w("")
        w("")
        w("class E2(E):")
        w("    def __init__(self, msg='e2', code=%s):" % r.choice(["0", "1", "-1"]))
        w("        %s" % r.choice(["super().__init__(msg, code)", "super().__init__(msg)",
                                   "E.__init__(self, code, msg)"]))
        w("        self.code = code")
        w("")
        w("")
        w("class EK(KeyError):")
        w("    pass")
        w("")
        w("")
        w("G_MODE = %d             # which branch raises (drive() changes it)" % r.randint(0, 6))
        w("G_ZERO = %s" % r.choice(["0", "0", "1", "0.0", "2"]))
        w("G_KEY = %r" % r.choice(["a", "zz", "b"]))
        w("G_STR = %r" % r.choice(["x", "12", "-3", "1e3"]))
        w("G_ELOG = []")
        for fname in ("risky", "_risky_alt"):
            behaviours = ["raise E('%s', %d)" % (fname, r.randint(0, 9)),
                          "raise E2('%s2', %d)" % (fname, r.randint(0, 9)),
                          "return t + {'a': 1.0, 'b': 2}[G_KEY]",
                          "return t * (1 / G_ZERO)",
                          "return t - int(G_STR)",
                          "assert t.ndim > 5, 'assert in %s %%d' %% k" % fname,
                          "return t + [1.0, 2.0, 3.0][k]",
                          "raise KeyError(k)",
                          "raise EK('%s')" % fname,
                          "raise IndexError"]
            r.shuffle(behaviours)
            w("")
            w("")
            w("def %s(t, k):" % fname)
            w('    """Raises by mode k (inlined into its callers)."""')
            for k, b in enumerate(behaviours[:r.randint(3, 6)], 1):
                w("    if k == %d:" % k)
                w("        %s" % b)
            w("    return t * %s" % r.choice(["2.0", "-1.0", "0.5"]))
        w("")
        w("")
        w("_risky_orig = risky")
        specs = ["E", "(KeyError, ZeroDivisionError)", "LookupError", "(AssertionError, ValueError)",
                 "E2", "(EK, IndexError)", "ValueError", "ArithmeticError"]
        r.shuffle(specs)
        w("")
        w("")
        w("def careful(t, k):")
        w('    """Catches some of what risky raises, re-raises (or wraps) the rest."""')
        w("    try:")
        w("        r = risky(t, k)")
        for j, spec in enumerate(specs[:r.randint(1, 3)]):
            w("    except %s as e:" % spec)
            c = r.random()
            if c < 0.25:
                w("        if k == %d:" % r.randint(1, 6))
                w("            raise")
            elif c < 0.4:
                w("        if k == %d:" % r.randint(1, 6))
                w("            raise E2('careful', k) from e")
            elif c < 0.5:
                w("        if k == %d:" % r.randint(1, 6))
                w("            raise KeyError('during', len(e.args))")
            w("        r = t %s len(e.args)" % r.choice(["-", "+", "*"]))
        if r.random() < 0.4:
            w("    else:")
            w("        r = r + 0.5")
        if r.random() < 0.6:
            w("    finally:")
            w("        %s" % ("G_ELOG.append('careful %r' % (k,))" if not pure else "t = None"))
        w("    return r")
        c1, c2 = r.randint(0, 3), r.randint(1, 4)
        w("")
        w("")
        w("def finisher(t, n):")
        w('    """return / break / continue inside try/finally."""')
        w("    acc = t")
        w("    for i in range(n):")
        w("        try:")
        w("            if i == %d:" % c1)
        w("                continue")
        w("            if i == %d:" % c2)
        w("                %s" % r.choice(["break", "return acc * 3.0"]))
        w("            acc = acc + i")
        w("        finally:")
        w("            acc = acc * 0.5")
        if not pure:
            w("            G_ELOG.append(i)")
        w("    try:")
        w("        if n > %d:" % r.randint(1, 4))
        w("            return acc")
        w("        acc = acc - 1.0")
        w("    finally:")
        w("        acc = acc + 100.0")
        if r.random() < 0.4:
            w("        if n == %d:" % r.randint(0, 4))
            w("            return t")
        w("    return acc")
    elif name == "generators":
        w("G_GN = %d               # a length generators read (drive() changes it)" % r.randint(1, 3))
        w("G_GLOG = []")
        w("")
        w("")
        for fname in ("gnum", "_gnum_alt"):
            w("def %s(n):" % fname)
            w("    for i in range(n):")
            w("        yield i * %s + %s" % (r.choice(["0.5", "2", "-1"]), r.choice(["0", "1.5", "-2"])))
            w("")
            w("")
        w("def gten(t, n=%d):" % r.randint(1, 3))
        w("    for i in range(n):")
        w("        yield %s" % r.choice(["t * (i + 1.0)", "t + i", "ops.relu(t) * i", "t[None] - i"]))
        w("")
        w("")
        w("def gnum_t(t):")
        w("    yield t")
        w("    yield t.sum()")
        w("    yield t * 0.5")
        w("")
        w("")
        w("def gfin(t, box):")
        w('    """try/finally around yield: the finally runs when it ends or is closed (dropped)."""')
        w("    try:")
        w("        yield t")
        w("        yield t - 1.0")
        w("    finally:")
        w("        box.append(%s)" % r.choice(["'gfin'", "len(box)", "2.5"]))
        w("")
        w("")
        w("def graise(t, k):")
        w("    yield t")
        w("    if k > %d:" % r.randint(0, 2))
        w("        raise %s" % r.choice(["ValueError('gen', k)", "KeyError('gen')", "ValueError"]))
        w("    yield t * 2.0")
        w("")
        w("")
        w("def gfrom(t):")
        w("    yield from gten(t, 2)")
        w("    yield t + 0.5")
        w("")
        w("")
        w("def gret(t):")
        w("    yield t")
        w("    return t * 3.0")
        w("")
        w("")
        w("def gdeleg(t):")
        w("    r = yield from gret(t)            # the value gret returns")
        w("    yield r + 1.0")
        w("")
        w("")
        w("def gstop(t):")
        w("    yield t")
        w("    next(iter([]))                    # StopIteration in a generator: RuntimeError")
        w("    yield t * 2.0")
        w("")
        w("")
        w("def gcount(start):")
        w("    i = start")
        w("    while True:")
        w("        yield i")
        w("        i += 1")
        w("")
        w("")
        w("def gglob(t):")
        w("    for i in range(G_GN):")
        w("        yield t + i")
        w("")
        w("")
        w("def drain(g):")
        w("    total = 0.0")
        w("    for e in g:")
        w("        total = total + e")
        w("    return total")
    elif name == "contexts":
        enter = p.env.fxv["ctx_enter"] = r.choice(["self", "self", "v"])
        w("import contextlib")
        w("")
        w("G_CLOG = []")
        w("")
        w("")
        w("class Mgr(object):")
        w("    def __init__(self, v, sup=False, log=None, name='m'):")
        w("        self.v = v")
        w("        self.sup = sup")
        w("        self.log = log")
        w("        self.name = name")
        w("")
        w("    def __enter__(self):")
        w("        if self.log is not None:")
        w("            self.log.append('enter ' + self.name)")
        w("        if self.sup == 'enter':")
        w("            raise ValueError('enter', self.name)")
        w("        return %s" % ("self" if enter == "self" else "self.v"))
        w("")
        w("    def __exit__(self, et, ev, tb):")
        w("        if self.log is not None:")
        w("            self.log.append('exit %%s %%r' %% (self.name, %s))" % r.choice([
            "et.__name__ if et is not None else None", "ev.args if ev is not None else ()"]))
        w("        if self.sup == 'boom':")
        w("            raise %s" % r.choice(["RuntimeError('exit', self.name)", "KeyError(self.name)"]))
        w("        return %s" % r.choice(["self.sup", "self.sup", "None",
                                          "self.sup or (et is not None and issubclass(et, LookupError))",
                                          "False if et is None else self.sup"]))
        w("")
        w("")
        w("_exit_orig, _enter_orig = Mgr.__exit__, Mgr.__enter__")
        w("")
        w("")
        w("def _exit_true(self, et, ev, tb):        # (its __name__ is not __exit__)")
        w("    return True")
        w("")
        w("")
        w("def _enter_other(self):")
        w("    return %s" % ("self" if enter == "v" else "self.v"))
        w("")
        w("")
        w("@contextlib.contextmanager")
        w("def cm(v, log):")
        w("    log.append('cm in')")
        w("    yield v * %s" % r.choice(["2.0", "-1.0"]))
        w("    log.append('cm out')          # not reached when the body raises")
        w("")
        w("")
        w("@contextlib.contextmanager")
        w("def cmf(v, log):")
        w("    log.append('cmf in')")
        w("    try:")
        w("        yield v")
        w("    except %s as e:" % r.choice(["KeyError", "ValueError", "(IndexError, TypeError)"]))
        w("        log.append('cmf caught %r' % (e.args,))   # suppressed: not raised again")
        w("    finally:")
        w("        log.append('cmf out')")
        w("")
        w("")
        w("M_G = Mgr(pj.Tensor([1.0, -2.0, 3.0]), False, %s, 'g')" % ("None" if pure else "G_CLOG"))
    elif name == "dunders":
        o = p.env.fxv
        o["d_add_t"] = r.random() < 0.5
        o["d_iadd"] = r.random() < 0.6
        o["d_eq"] = r.choice(["notimpl", "false"])
        o["d_bool"] = r.choice(["bool", "bool", "nonbool", "none"])
        o["d_iter"] = r.choice(["gen", "list", "none"])
        o["d_contains"] = r.choice([None, "bool", "n"])
        o["d_hash"] = r.random() < 0.5
        w("class V(object):")
        w('    """Operators of a user class: capture must run each where Python runs it."""')
        w("    def __init__(self, v, n=%d):" % r.choice([1, 2, 3]))
        w("        self.v = v")
        w("        self.n = n")
        w("")
        w("    def __add__(self, o):")
        w("        if isinstance(o, V):")
        w("            return V(self.v + o.v, self.n)")
        w("        if isinstance(o, (int, float%s)):" % (", pj.Tensor" if o["d_add_t"] else ""))
        w("            return V(self.v + o, self.n)")
        w("        return NotImplemented")
        w("")
        w("    def __radd__(self, o):")
        w("        if isinstance(o, (int, float, pj.Tensor)):")
        w("            return V(o + self.v, self.n + 1)")
        w("        return NotImplemented")
        if o["d_iadd"]:
            w("")
            w("    def __iadd__(self, o):")
            w("        self.v = self.v + (o.v if isinstance(o, V) else o)")
            w("        self.n += 1")
            w("        return self")
        w("")
        w("    def __sub__(self, o):")
        w("        return V(self.v - (o.v if isinstance(o, V) else o), self.n)")
        w("")
        w("    def __mul__(self, o):")
        w("        if isinstance(o, V):")
        w("            return V(self.v * o.v, self.n)")
        w("        if isinstance(o, pj.Tensor) and self.n %s:" % r.choice(["< 0", "== 2", "> 0"]))
        w("            return NotImplemented")
        w("        return V(self.v * o, self.n)")
        w("")
        w("    def __rmul__(self, o):")
        w("        return V(o * self.v, self.n + %d)" % r.choice([0, 1, -1]))
        w("")
        w("    def __matmul__(self, o):")
        w("        return %s" % r.choice(["self.v * (o.v if isinstance(o, V) else o)",
                                          "(o.v if isinstance(o, V) else o) - self.v"]))
        w("")
        w("    def __neg__(self):")
        w("        return V(-self.v, -self.n)")
        w("")
        w("    def __eq__(self, o):")
        w("        if not isinstance(o, V):")
        w("            return %s" % ("NotImplemented" if o["d_eq"] == "notimpl" else "False"))
        w("        return self.n == o.n")
        if r.random() < 0.5:
            w("")
            w("    def __ne__(self, o):")
            w("        return not (isinstance(o, V) and self.n == o.n)")
        if o["d_hash"]:
            w("")
            w("    __hash__ = object.__hash__")
        w("")
        w("    def __lt__(self, o):")
        w("        return self.n < (o.n if isinstance(o, V) else o)")
        w("")
        if o["d_bool"] != "none":          # (none: truth by __len__)
            w("    def __bool__(self):")
            w("        return %s" % ("self.n > 0" if o["d_bool"] == "bool" else "self.n"))
            w("")
        w("    def __len__(self):")
        w("        return self.n")
        w("")
        w("    def __getitem__(self, i):")
        w("        if i >= self.n:")
        w("            raise IndexError(i)")
        w("        return self.v * (i + 1)")
        w("")
        w("    def __setitem__(self, i, x):")
        w("        self.v = self.v + x * (i + 1)")
        if o["d_iter"] == "gen":
            w("")
            w("    def __iter__(self):")
            w("        for i in range(max(self.n, 0)):")
            w("            yield self.v + i")
        elif o["d_iter"] == "list":
            w("")
            w("    def __iter__(self):")
            w("        return iter([self.v, self.v * 2.0][:max(self.n, 0)])")
        if o["d_contains"]:
            w("")
            w("    def __contains__(self, o):")
            w("        return %s" % ("o == self.n" if o["d_contains"] == "bool" else
                                   "self.n      # (`in` takes its truth)"))
        w("")
        w("    def __call__(self, t):")
        w("        return t * self.n + self.v")
        w("")
        w("")
        w("class VS(V):")
        w('    """Overrides the reflected methods: Python calls them first when a VS is the right')
        w('    operand of a V."""')
        w("    def __radd__(self, o):")
        w("        return VS((o.v if isinstance(o, V) else o) + self.v + 1.0, self.n)")
        w("")
        w("    def __rmul__(self, o):")
        w("        return VS((o.v if isinstance(o, V) else o) * self.v - 1.0, self.n)")
        if r.random() < 0.4:
            w("")
            w("    def __lt__(self, o):")
            w("        return NotImplemented")
        w("")
        w("")
        w("_V_ORIG, _vs_radd = dict(vars(V)), VS.__radd__")
        w("")
        w("")
        w("def _v_reset(name):")
        w('    """V\'s special method `name` as the class defined it (or none again)."""')
        w("    if name in _V_ORIG:")
        w("        setattr(V, name, _V_ORIG[name])")
        w("    elif name in vars(V):")
        w("        delattr(V, name)")
        w("")
        w("")
        w("def _v_add_alt(self, o):")
        w("    return NotImplemented if isinstance(o, V) else V(self.v - o, 0)")
        w("")
        w("")
        w("U0 = V(pj.Tensor(%s), %d)        # f's u when the caller passes none; also read as a global"
          % (r.choice(["[1.0, -2.0, 0.5]", "[2.0]", "3.0", "[0.0, 1.5, -1.0]"]), r.choice([1, 2, 3])))


def globals_written(p):
    """The globals drive() may rebind for the program's features."""
    out = []
    fx = p.env.fx
    if "exceptions" in fx:
        out += ["G_MODE", "G_ZERO", "G_KEY", "G_STR", "risky"]
    if "generators" in fx:
        out += ["G_GN"]
    if "dunders" in fx:
        out += ["U0"]
    return out


def drive_setup(p):
    """Lines at the top of drive() (objects it passes in)."""
    if "dunders" in p.env.fx:
        r = p.env.fr["dunders"]
        return ["UA = %s(pj.Tensor(%s), %d)" % (r.choice(["V", "VS"]), r.choice(
            ["[1.0, 2.0, -1.0]", "[0.5]", "-2.0"]), r.choice([1, 2, 3]))]
    return []


def call_kwargs(p):
    """Keyword arguments a call passes for the features (u for dunders, sometimes omitted)."""
    if "dunders" not in p.env.fx:
        return []
    r = p.env.fr["dunders"]
    c = r.random()
    if c < 0.25:
        return []
    if c < 0.65:
        return ["u=UA"]
    return ["u=%s(pj.Tensor(%s), %d)" % (r.choice(["V", "VS"]), r.choice(
        ["[1.0, 2.0, -1.0]", "[0.5]", "-2.0", "[3.0, 0.0]"]), r.choice([-1, 0, 1, 2, 3]))]


def mutation(p):
    """A change between calls for one of the program's features, or None."""
    for name in NAMES:
        if name not in p.env.fx:
            continue
        r = p.env.fr[name]
        if r.random() >= MUTATION_P:
            continue
        fv = lambda: r.choice(["0.5", "-1.0", "2", "0", "3.0"])
        if name == "exceptions":
            opts = ["G_MODE = %d" % r.randint(0, 6)] * 3 + [
                "G_ZERO = %s" % r.choice(["0", "1", "0.0", "-2"]),
                "G_KEY = %r" % r.choice(["a", "zz", "b"]), "G_STR = %r" % r.choice(["x", "7", "-1"]),
                "risky = _risky_alt", "risky = _risky_orig", "G_ELOG.clear()",
                "E2.code = %s" % fv()]
        elif name == "generators":
            opts = ["G_GN = %d" % r.randint(0, 3), "gten.__defaults__ = (%d,)" % r.randint(1, 3),
                    "G_GLOG.clear()", "gnum.__code__ = _gnum_alt.__code__"]
        elif name == "contexts":
            opts = ["Mgr.__exit__ = _exit_true", "Mgr.__exit__ = _exit_orig"] * 2 + [
                    "Mgr.__enter__ = _enter_other", "Mgr.__enter__ = _enter_orig",
                    "M_G.sup = %s" % r.choice(["True", "False"]), "G_CLOG.clear()",
                    "M_G.v = pj.Tensor(%s)" % r.choice(["[2.0]", "[0.5, 1.0, -1.0]"])]
        else:
            opts = ["V.__add__ = _v_add_alt", "_v_reset('__add__')",
                    "V.__bool__ = lambda self: self.n", "_v_reset('__bool__')",
                    "V.__len__ = lambda self: -1", "_v_reset('__len__')",
                    "_v_reset(%r)" % r.choice(["__iter__", "__contains__", "__iadd__", "__neg__",
                                               "__eq__"]),
                    "if '__radd__' in vars(VS): del VS.__radd__", "VS.__radd__ = _vs_radd",
                    "V.__iter__ = lambda self: iter([self.v])",
                    "V.__contains__ = lambda self, o: False",
                    "if '__iadd__' in vars(V): del V.__iadd__",
                    "V.__neg__ = lambda self: self", "V.__eq__ = lambda self, o: True",
                    "UA.n = %d" % r.choice([-1, 0, 1, 3]), "UA.v = pj.Tensor(%s)" % fv(),
                    "U0.n = %d" % r.choice([-1, 0, 2]),
                    "U0 = V(pj.Tensor([%s, %s]), %d)" % (fv(), fv(), r.choice([0, 1, 2]))]
        return r.choice(opts)
    return None
