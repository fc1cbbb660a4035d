"""capture/'s opcode table and decoder against the running interpreter's own opcode and dis
modules: the same opcodes and numbers, the same stack effects as dis.stack_effect, and the same
instructions as dis.get_instructions for real stdlib code (3.11 and 3.12 included: their caches,
backward jumps and location tables). Runs on 3.7 to 3.12; skips (saying why) where there is no
table column."""
import dis
import importlib
import opcode
import sys
import types
import unittest

from pijit import _C


def _unsupported_reason(hook):
    try:
        hook()
    except NotImplementedError as e:
        return str(e)
    return None


UNSUPPORTED = _unsupported_reason(_C._opcode_table)
# 3.11: the opcode table and the decoder run, the simulator not yet.
CAPTURE_UNSUPPORTED = UNSUPPORTED or _unsupported_reason(_C._simulated_opcodes)
HAS_JUMP_ARG = sys.version_info >= (3, 8)  # dis.stack_effect(..., jump=) appeared in 3.8
JUMP_OPS = set(opcode.hasjrel) | set(opcode.hasjabs)
# 3.12's opmap also names the compiler's pseudo-instructions (numbers from 256: SETUP_FINALLY,
# JUMP, LOAD_METHOD, ...), which never reach a code object.
OPMAP = {name: number for name, number in opcode.opmap.items() if number < 256}

# dis.stack_effect raises ValueError for these on 3.7 (compile.c had no case for them; 3.8 added
# one). pijit's table says 0, which is what they do.
DIS_HAS_NO_EFFECT = {"NOP", "EXTENDED_ARG"} if sys.version_info < (3, 8) else set()
if sys.version_info[:2] == (3, 12):
    DIS_HAS_NO_EFFECT = {"INSTRUMENTED_LINE"}  # (sys.monitoring's; the compiler never emits it)

OPARGS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 255, 256, 257, 258, 259, 511, 0x1FF00, 65535, 0x10003)


def _all_codes(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _all_codes(c)


def _expected(code):
    """dis.get_instructions folded the way pijit decodes: EXTENDED_ARG merged into the next
    instruction (a jump landing on the prefix marks that instruction), lines propagated from the
    line starts."""
    out = []
    line = code.co_firstlineno
    carried_target = False
    for ins in dis.get_instructions(code):
        if ins.starts_line is not None:
            line = ins.starts_line
        if ins.opname == "EXTENDED_ARG":
            carried_target = carried_target or ins.is_jump_target
            continue
        target = ins.argval if ins.opcode in JUMP_OPS else None
        out.append((ins.offset, ins.opname, ins.arg, line, target, ins.is_jump_target or carried_target))
        carried_target = False
    return out


def _with_bytecode(code, raw):
    if hasattr(code, "replace"):
        return code.replace(co_code=raw)
    return types.CodeType(code.co_argcount, code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize,
                          code.co_flags, raw, code.co_consts, code.co_names, code.co_varnames,
                          code.co_filename, code.co_name, code.co_firstlineno, code.co_lnotab,
                          code.co_freevars, code.co_cellvars)


# Every construct whose bytecode differs between 3.7 and 3.9: blocks, handlers, unpacking,
# f-strings, async; plus code with > 256 constants so EXTENDED_ARG prefixes (also as jump targets).
SYNTHETIC = '''
import contextlib
def blocks(a, *args, **kw):
    for x in a:
        if x: continue
        if not x: break
    else:
        pass
    while a:
        try:
            a = a[1:]
        except (KeyError, IndexError) as e:
            raise ValueError() from e
        except Exception:
            raise
        else:
            pass
        finally:
            del a
            a = 0
    with contextlib.suppress(Exception) as s, open(__file__):
        pass
    assert a, "msg"
    return [*a, *args], {**kw, 'k': 1}, {*a}, (*a,), f(*a, **kw), f"{a!r:>{kw}} {a}", a is not None, a not in kw
async def coro(it):
    async with it as x:
        async for y in x:
            await y
    return [z async for z in it]
def gen():
    yield from range(3)
    x = yield
    lambda: x
    class C:
        nonlocal_x = x
        def m(self):
            return x, __class__
'''
BIG = "def big(a):\n    x = [a, %s]\n    if a:\n        pass\n    else:\n        y = %d\n    return x, y\n" % (
    ", ".join(str(i) for i in range(300)), 299 + 1000)


@unittest.skipIf(UNSUPPORTED, UNSUPPORTED)
class TestOpcodeTable(unittest.TestCase):
    def test_covers_exactly_opmap(self):
        table = {name: number for name, number, _ in _C._opcode_table()}
        self.assertEqual(len(table), len(_C._opcode_table()), "an opcode is listed twice")
        self.assertEqual(sorted(set(OPMAP) - set(table)), [], "missing from opcodes.def")
        self.assertEqual(sorted(set(table) - set(OPMAP)), [], "not an opcode of this Python")
        self.assertEqual(table, OPMAP)

    def test_flags_agree_with_opcode_lists(self):
        bits = _C._opcode_flags()
        lists = {"JUMP_REL": opcode.hasjrel, "JUMP_ABS": opcode.hasjabs, "NAME": opcode.hasname,
                 "CONST": opcode.hasconst, "LOCAL": opcode.haslocal, "FREE": opcode.hasfree,
                 "COMPARE": opcode.hascompare}
        for name, number, flags in _C._opcode_table():
            self.assertEqual(bool(flags & bits["ARG"]), number >= opcode.HAVE_ARGUMENT, name)
            for flag, numbers in lists.items():
                self.assertEqual(bool(flags & bits[flag]), number in numbers, "%s %s" % (name, flag))
            if flags & (bits["COND_JUMP"] | bits["SETUP"]):
                self.assertIn(number, JUMP_OPS, name)
            # 3.11: backward jumps count back (their names say so), and inline caches follow some
            # (3.12's INSTRUMENTED_JUMP_BACKWARD is sys.monitoring's, not a jump opcode.lists has)
            self.assertEqual(bool(flags & bits["JUMP_BACK"]), "BACKWARD" in name and number in JUMP_OPS, name)
            caches = getattr(opcode, "_inline_cache_entries", [0] * 256)[number]
            self.assertEqual((flags >> bits["CACHES_SHIFT"]) & 0xFF, caches, name)

    def test_stack_effect_matches_dis(self):
        jumps = (None, True, False) if HAS_JUMP_ARG else (None,)
        checked = 0
        for name, number, _ in _C._opcode_table():
            args = OPARGS if number >= opcode.HAVE_ARGUMENT else (None,)
            for arg in args:
                for jump in jumps:
                    ours = _C._stack_effect(number, arg or 0, jump)
                    try:
                        if arg is None:
                            theirs = dis.stack_effect(number) if jump is None else dis.stack_effect(number, jump=jump)
                        else:
                            theirs = dis.stack_effect(number, arg) if jump is None else dis.stack_effect(number, arg, jump=jump)
                    except ValueError:
                        self.assertIn(name, DIS_HAS_NO_EFFECT, "dis cannot tell %s's effect" % name)
                        self.assertEqual(ours, 0, name)
                        continue
                    self.assertEqual(ours, theirs, "%s oparg=%r jump=%r" % (name, arg, jump))
                    checked += 1
        self.assertGreater(checked, 1000)

    def test_jump_none_is_the_larger_effect(self):
        # On 3.7 dis offers only jump=None; the table's two branches must still bracket it.
        for name, number, _ in _C._opcode_table():
            for arg in (0, 1, 3, 256):
                both = (_C._stack_effect(number, arg, True), _C._stack_effect(number, arg, False))
                self.assertEqual(_C._stack_effect(number, arg, None), max(both), name)

    def test_unknown_opcode_number(self):
        unused = min(set(range(1, 256)) - set(OPMAP.values()))
        with self.assertRaises(ValueError):
            _C._stack_effect(unused, 0, None)

# The running interpreter's opcodes capture has no handler for (capture/op_handlers.def): each
# ends capture with B001 UnsupportedOpcode. EXTENDED_ARG never reaches a handler (the decoder
# folds it into the next instruction's argument); the *_NAME opcodes, SETUP_ANNOTATIONS and
# PRINT_EXPR run only in module and class bodies, which capture never sees; the async ones only in
# coroutines; a class statement (LOAD_BUILD_CLASS), `del` of a closure variable (DELETE_DEREF) and
# a class body's read of an enclosing function's variable (LOAD_CLASSDEREF) refuse.
NOT_SIMULATED = {"BEFORE_ASYNC_WITH", "DELETE_DEREF", "DELETE_NAME", "EXTENDED_ARG", "LOAD_BUILD_CLASS",
                 "LOAD_CLASSDEREF", "LOAD_NAME", "PRINT_EXPR", "SETUP_ANNOTATIONS", "SETUP_ASYNC_WITH",
                 "STORE_NAME"}
if sys.version_info[:2] in ((3, 7), (3, 8)):
    NOT_SIMULATED |= {"BUILD_SET_UNPACK"}
if sys.version_info >= (3, 8):
    NOT_SIMULATED |= {"END_ASYNC_FOR"}
if sys.version_info[:2] == (3, 11):
    # CACHE units are skipped by the decoder; ASYNC_GEN_WRAP is async generators'; except* (its
    # CHECK_EG_MATCH and PREP_RERAISE_STAR) refuses
    NOT_SIMULATED = (NOT_SIMULATED - {"SETUP_ASYNC_WITH"}) | {"ASYNC_GEN_WRAP", "CACHE", "CHECK_EG_MATCH",
                                                               "PREP_RERAISE_STAR"}


@unittest.skipIf(CAPTURE_UNSUPPORTED, CAPTURE_UNSUPPORTED)
class TestSimulatedOpcodes(unittest.TestCase):
    """Which opcodes have a handler is a visible decision: adding or dropping one changes this."""

    def test_every_other_opcode_has_a_handler(self):
        simulated = set(_C._simulated_opcodes())
        self.assertEqual(sorted(simulated - set(OPMAP)), [], "a handler for an opcode this Python lacks")
        self.assertEqual(sorted(set(OPMAP) - simulated), sorted(NOT_SIMULATED))

    def _refusal(self, fn, *args):
        import pijit as pj
        jf = pj.jit(fn)
        self.assertEqual(jf(*args), fn(*args))
        st = pj.jit_stats(jf)
        self.assertEqual(st["graphs"], 0, st["break_reasons"])
        return st["break_reasons"][0]

    def test_unhandled_opcodes_refuse_with_b001_naming_the_opcode(self):
        def deletes_a_closure_variable(x):
            y = x + 1

            def inner():
                return y
            z = inner()
            del y
            return z

        def makes_a_class(x):
            class Local(object):
                pass
            return type(Local()).__name__ + str(x)

        for fn, name in ((deletes_a_closure_variable, "DELETE_DEREF"), (makes_a_class, "LOAD_BUILD_CLASS")):
            reason = self._refusal(fn, 2)
            self.assertTrue(reason.startswith("B001 UnsupportedOpcode at "), reason)
            self.assertTrue(reason.endswith(": " + name), reason)


@unittest.skipIf(UNSUPPORTED, UNSUPPORTED)
class TestDecode(unittest.TestCase):
    MODULES = ("os", "json.decoder", "json.encoder", "re", "sre_compile", "sre_parse", "collections",
               "argparse", "unittest.case", "typing", "dataclasses", "contextlib", "inspect",
               "asyncio.tasks", "tarfile", "pickle", "enum")

    def assertDecodesLikeDis(self, code):
        got = _C._decode(code)
        want = _expected(code)
        if got != want:  # report the first difference, not two whole listings
            for g, w in zip(got, want):
                self.assertEqual(g, w, "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno))
            self.assertEqual(len(got), len(want), code.co_name)

    def test_stdlib_modules(self):
        n = 0
        for name in self.MODULES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            top = mod.__spec__.loader.get_code(name)
            for code in _all_codes(top):
                self.assertDecodesLikeDis(code)
                n += 1
        self.assertGreater(n, 1000)

    def test_every_block_construct(self):
        for code in _all_codes(compile(SYNTHETIC, "<synthetic>", "exec")):
            self.assertDecodesLikeDis(code)

    def test_extended_arg_folds_into_its_instruction(self):
        top = compile(BIG, "<big>", "exec")
        big = [c for c in top.co_consts if isinstance(c, types.CodeType)][0]
        prefixed_targets = [i for i in dis.get_instructions(big) if i.opname == "EXTENDED_ARG" and i.is_jump_target]
        self.assertTrue(prefixed_targets, "the fixture should jump onto an EXTENDED_ARG prefix")
        self.assertDecodesLikeDis(big)
        decoded = _C._decode(big)
        self.assertNotIn("EXTENDED_ARG", [d[1] for d in decoded])
        self.assertIn(300 + 1, [d[2] for d in decoded if d[1] == "LOAD_CONST"])

    def assertReadsHandlersLikeDis(self, code):
        """3.11: the exception table as dis parses it; before, none (handlers are blocks)."""
        got = _C._exception_table(code)
        parse = getattr(dis, "_parse_exception_table", None)
        want = [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse(code)] if parse else []
        self.assertEqual(got, want, "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno))
        return len(got)

    def test_exception_tables(self):
        entries = 0
        for name in self.MODULES:
            top = importlib.import_module(name).__spec__.loader.get_code(name)
            entries += sum(self.assertReadsHandlersLikeDis(code) for code in _all_codes(top))
        entries += sum(self.assertReadsHandlersLikeDis(code)
                       for code in _all_codes(compile(SYNTHETIC, "<synthetic>", "exec")))
        if not hasattr(dis, "_parse_exception_table"):
            self.assertEqual(entries, 0)  # before 3.11 handlers are SETUP_* blocks: no table
            return
        self.assertGreater(entries, 500)
        # a malformed table, or one that does not fit the code, is a ValueError
        code = [c for c in _all_codes(compile(SYNTHETIC, "<synthetic>", "exec")) if c.co_name == "blocks"][0]
        table = code.co_exceptiontable
        self.assertTrue(table)
        for reason, bad in (("malformed exception table", table[:-1] + bytes([table[-1] | 0x40])),
                            ("does not fit the code", bytes([0x80, 1, 0x7F, 0x3F, 0]))):
            with self.assertRaises(ValueError) as cm:
                _C._exception_table(code.replace(co_exceptiontable=bad))
            self.assertIn(reason, str(cm.exception))

    def test_malformed_bytecode_is_a_value_error(self):
        base = compile("x = 1", "<m>", "exec")
        ea, load = opcode.opmap["EXTENDED_ARG"], opcode.opmap["LOAD_CONST"]
        jabs = opcode.opmap.get("JUMP_ABSOLUTE", opcode.opmap["JUMP_FORWARD"])  # (3.11: relative jumps only)
        ret = opcode.opmap["RETURN_VALUE"]
        cases = {
            "truncated EXTENDED_ARG": bytes([load, 0, ret, 0, ea, 1]),
            "more than 3 EXTENDED_ARG": bytes([ea, 0, ea, 0, ea, 0, ea, 0, load, 0, ret, 0]),
            "outside the code": bytes([jabs, 200, ret, 0]),
        }
        # An opcode number the interpreter lacks. Not on 3.11: it gives every free number to a
        # specialised instruction, and making a code object of one corrupts memory (its quickening
        # writes the caches the bytes do not hold).
        if "CACHE" not in opcode.opmap:
            unknown = min(set(range(1, 256)) - set(opcode.opmap.values()))
            cases["unknown opcode %d at offset 2" % unknown] = bytes([load, 0, unknown, 0, ret, 0])
        else:  # 3.11's and 3.12's inline caches: a jump back into BINARY_SUBSCR's first cache unit
            back, subscr = opcode.opmap["JUMP_BACKWARD"], opcode.opmap["BINARY_SUBSCR"]
            n = opcode._inline_cache_entries[subscr]  # (4 on 3.11, 1 on 3.12)
            cases["inside an instruction's caches"] = bytes([load, 0, subscr, 0] + [0, 0] * n + [back, n + 1, ret, 0])
            # (caches cut short by the code's end: not built here, 3.11's own quickening of such a
            # code object writes past its bytecode; the decoder refuses them all the same)
            cases["jump target -2 outside the code"] = bytes([back, 2, ret, 0])
        for reason, raw in cases.items():
            with self.assertRaises(ValueError) as cm:
                _C._decode(_with_bytecode(base, raw))
            self.assertIn(reason, str(cm.exception))
        with self.assertRaises(TypeError):
            _C._decode("not code")


if __name__ == "__main__":
    unittest.main()
