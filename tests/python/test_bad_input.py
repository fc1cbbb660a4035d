"""Issue 41's "Trust" and "Clear errors" classes: public entries given nonsense answer with one
clear exception, never a leak of internals, a silent acceptance or code run on their behalf.

- pijit.pseudo reads a code object's constants as objects: a crafted constant's repr, str or
  text is never evaluated or called;
- load_checkpoint on a truncated, flipped or forged file raises one ValueError naming the file
  and what is wrong (never struct.error, KeyError, TypeError or a silently wrong shape);
- setters (set_num_threads, set_context, set_seed, set_device, set_jit_config), jit's options and
  every layer's call check their arguments with MindSpore's types (TypeError for a wrong type,
  ValueError for a wrong value) and messages naming the function and the argument, eagerly and
  under jit alike.
"""
import builtins
import json
import os
import shutil
import struct
import tempfile
import types
import unittest

import pijit as pj
from pijit import nn
from pijit.pseudo import pseudo_source
from pijit.serialization import MAGIC
from jit_compare import CAPTURE_ON, assert_ran_eagerly

T = pj.Tensor


# ---- pijit.pseudo ---------------------------------------------------------------------------------
_RAN = []


class _Evil(object):
    """A constant only a crafted code object holds: its repr is Python source that would run."""

    def __repr__(self):
        _RAN.append("repr")
        return "__import__('builtins').__dict__.__setitem__('PIJIT_PWNED', 1) or ('a',)"

    __str__ = __repr__


class _EvilStr(str):
    def __repr__(self):
        _RAN.append("str repr")
        return "__import__('builtins').__dict__.__setitem__('PIJIT_PWNED', 2) or 'x'"

    def __str__(self):
        _RAN.append("str str")
        return "x"


def _with(code, consts, name=None, filename=None):
    name = code.co_name if name is None else name
    filename = code.co_filename if filename is None else filename
    if hasattr(code, "replace"):
        return code.replace(co_consts=consts, co_name=name, co_filename=filename)
    return types.CodeType(code.co_argcount, code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize,
                          code.co_flags, code.co_code, consts, code.co_names, code.co_varnames, filename,
                          name, code.co_firstlineno, code.co_lnotab, code.co_freevars, code.co_cellvars)


def _calls_with_keywords(g, a):
    return g(a, key=a, other=1)


class PseudoRunsNothing(unittest.TestCase):
    def setUp(self):
        del _RAN[:]
        self.addCleanup(lambda: builtins.__dict__.pop("PIJIT_PWNED", None))

    def test_keyword_names_are_read_as_the_constant(self):
        text = pseudo_source(_calls_with_keywords.__code__)
        self.assertIn("return g(a, key=a, other=1)", text)

    def test_a_crafted_keyword_names_constant_is_not_evaluated(self):
        code = _calls_with_keywords.__code__
        consts = tuple(_Evil() if c == ("key", "other") else c for c in code.co_consts)
        self.assertIn(("key", "other"), code.co_consts)  # (3.7 and 3.9 both name them in one tuple)
        text = pseudo_source(_with(code, consts))
        self.assertEqual(_RAN, [])
        self.assertNotIn("PIJIT_PWNED", builtins.__dict__)
        self.assertIn("return g(a, a, 1)", text)  # unknown names: the arguments shown positionally

    def test_crafted_constants_and_names_are_shown_without_running_them(self):
        code = _calls_with_keywords.__code__
        consts = tuple((_EvilStr("k"), _Evil()) if c == ("key", "other") else
                       _Evil() if c == 1 else c for c in code.co_consts)
        text = pseudo_source(_with(code, consts, name=_EvilStr("f"), filename=_EvilStr("file.py")))
        self.assertEqual(_RAN, [])
        self.assertNotIn("PIJIT_PWNED", builtins.__dict__)
        self.assertIn("<_Evil constant>", text)
        self.assertIn("def f(g, a):  # pseudo-source of file.py:", text)


# ---- load_checkpoint ------------------------------------------------------------------------------
def _ckpt(path, header, data=b"", magic=MAGIC, hlen=None):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode("utf-8")
    with open(path, "wb") as f:
        f.write(magic + struct.pack("<Q", len(raw) if hlen is None else hlen) + raw + data)
    return path


def _rec(name="w", dtype="float32", shape=(2,), offset=0, nbytes=8, **more):
    r = {"name": name, "dtype": dtype, "shape": list(shape), "offset": offset, "nbytes": nbytes,
         "requires_grad": True}
    r.update(more)
    return r


class CheckpointFaults(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.good = os.path.join(self.dir, "good.ckpt")
        self.tensors = {"w": pj.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                        "i": pj.Tensor([7, 8], dtype=pj.int32), "l": pj.Tensor([-9], dtype=pj.int64),
                        "s": pj.Tensor(2.5, dtype=pj.float64), "e": pj.zeros((0, 3)),
                        "m": pj.Tensor([True, False, True])}
        pj.save_checkpoint(self.tensors, self.good, append_dict={"epoch": 3})
        with open(self.good, "rb") as f:
            self.blob = f.read()

    def write(self, blob, name="bad.ckpt"):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(blob)
        return path

    def assert_bad(self, path, *words):
        """load_checkpoint(path) raises ValueError naming the file and each of `words`."""
        with self.assertRaises(ValueError) as cm:
            pj.load_checkpoint(path)
        msg = str(cm.exception)
        self.assertIn(path, msg)
        for w in words:
            self.assertIn(w, msg)
        return msg

    def assert_same_as_saved(self, loaded):
        for name, t in self.tensors.items():
            self.assertEqual(loaded[name].shape, t.shape, name)
            self.assertIs(loaded[name].dtype, t.dtype, name)
            self.assertEqual(loaded[name].tolist(), t.tolist(), name)
        self.assertEqual(loaded["epoch"], 3)

    def test_the_good_file_loads(self):
        self.assert_same_as_saved(pj.load_checkpoint(self.good))

    def test_every_truncation(self):
        # Up to the end of the last tensor's data every cut is refused; past it only padding goes.
        fixed = len(MAGIC) + 8
        (hlen,) = struct.unpack("<Q", self.blob[len(MAGIC):fixed])
        header = json.loads(self.blob[fixed:fixed + hlen].decode("utf-8"))
        end = fixed + hlen + max(r["offset"] + r["nbytes"] for r in header["tensors"])
        self.assertLess(end, len(self.blob))  # the last tensor is padded: some cuts keep it whole
        for cut in range(len(self.blob)):
            path = self.write(self.blob[:cut])
            if cut < end:
                msg = self.assert_bad(path)
                self.assertTrue("truncated" in msg or "runs past the end" in msg, (cut, msg))
            else:
                self.assert_same_as_saved(pj.load_checkpoint(path))

    def test_every_flipped_byte_of_the_preamble_and_header(self):
        fixed = len(MAGIC) + 8
        (hlen,) = struct.unpack("<Q", self.blob[len(MAGIC):fixed])
        outcomes = {"refused": 0, "loaded": 0}
        for pos in range(fixed + hlen):
            for mask in (0x01, 0x20, 0x80, 0xFF):
                blob = bytearray(self.blob)
                blob[pos] ^= mask
                path = self.write(bytes(blob))
                try:
                    loaded = pj.load_checkpoint(path)
                except ValueError as exc:
                    self.assertIn(path, str(exc))
                    outcomes["refused"] += 1
                    continue
                # A flip that keeps the header valid (a digit of an offset, a letter of a name)
                # loads tensors of the shapes and dtypes the header says.
                outcomes["loaded"] += 1
                for name, t in loaded.items():
                    if isinstance(t, pj.Parameter):
                        self.assertEqual(t.size, len(t.reshape(-1).tolist()))
        self.assertGreater(outcomes["refused"], 3 * (fixed + hlen))

    def test_a_negative_size_is_refused_not_read_as_one(self):
        path = _ckpt(os.path.join(self.dir, "neg.ckpt"), {"tensors": [_rec(shape=(-1, 2))]}, b"\0" * 64)
        self.assert_bad(path, "parameter 'w'", "every size in shape [-1, 2]", "-1")

    def test_huge_sizes(self):
        cases = [((2 ** 62,), 2 ** 64, "too large"), ((2 ** 32, 2 ** 32), 2 ** 66, "too large"),
                 ((0, 2 ** 62), 0, "too large"), ((2 ** 62, 0, 2 ** 62), 0, "too large"),
                 ((2 ** 64,), 8, "too large"), ((10 ** 40, 1), 8, "too large"),
                 ((2 ** 20, 2 ** 20), 4 * 2 ** 40, "runs past the end")]
        for shape, nbytes, words in cases:
            path = _ckpt(os.path.join(self.dir, "huge.ckpt"), {"tensors": [_rec(shape=shape, nbytes=nbytes)]},
                         b"\0" * 64)
            self.assert_bad(path, "parameter 'w'", words)

    def test_malformed_records(self):
        data = b"\0" * 64
        cases = [
            ([_rec(dtype="float8")], "unknown dtype 'float8'"),
            ([_rec(dtype="complex32")], "unknown dtype 'complex32'"),
            ([_rec(dtype=5)], "unknown dtype 5"),
            ([_rec(dtype=None)], "unknown dtype None"),
            ([_rec(nbytes=4)], "nbytes is 4 but shape [2] of float32 needs 8"),
            ([_rec(nbytes=12)], "nbytes is 12"),
            ([_rec(nbytes=-8)], "nbytes must be an int >= 0"),
            ([_rec(nbytes=8.0)], "nbytes must be an int"),
            ([_rec(offset=-8)], "offset must be an int >= 0"),
            ([_rec(offset=60)], "runs past the end"),
            ([_rec(offset=2 ** 70)], "runs past the end"),
            ([_rec(offset="0")], "offset must be an int"),
            ([_rec(shape=(2.0,))], "every size in shape"),
            ([_rec(shape=(True, 2))], "every size in shape"),
            ([_rec(shape=("2",))], "every size in shape"),
            ([dict(_rec(), shape="ab")], "shape must be a list of ints"),
            ([dict(_rec(), shape=None)], "shape must be a list of ints"),
            ([dict(_rec(), shape={"a": 1})], "shape must be a list of ints"),
            ([_rec(name="")], "name must be a non-empty string"),
            ([_rec(name=7)], "name must be a non-empty string"),
            ([_rec(), _rec(offset=0)], "parameter 'w' appears twice"),
            ([_rec(requires_grad="yes")], "requires_grad must be true or false"),
            ([{"name": "w", "dtype": "float32", "shape": [2], "offset": 0}], "has no 'nbytes'"),
            ([{"dtype": "float32", "shape": [2], "offset": 0, "nbytes": 8}], "has no 'name'"),
            (["w"], "tensor record 0 is a str"),
            ([None], "tensor record 0 is a NoneType"),
        ]
        for records, words in cases:
            path = _ckpt(os.path.join(self.dir, "rec.ckpt"), {"tensors": records}, data)
            self.assert_bad(path, words)

    def test_malformed_files(self):
        d = self.dir
        good_header = json.dumps({"tensors": [_rec()]}).encode()
        cases = [
            (self.write(b"", "empty.ckpt"), "truncated: 0 bytes"),
            (self.write(MAGIC[:5], "five.ckpt"), "truncated: 5 bytes"),
            (self.write(b"NOTACKPT" * 4, "other.ckpt"), "not a pijit checkpoint (bad magic)"),
            (self.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "png.ckpt"), "bad magic"),
            (_ckpt(os.path.join(d, "v2.ckpt"), {"tensors": []}, magic=MAGIC[:-1] + b"\x02"),
             "unsupported format version 2"),
            (_ckpt(os.path.join(d, "hlen.ckpt"), {"tensors": []}, hlen=2 ** 64 - 1), "truncated: the header says"),
            (_ckpt(os.path.join(d, "hlen2.ckpt"), good_header, b"\0" * 8, hlen=len(good_header) + 9),
             "truncated: the header says"),
            (_ckpt(os.path.join(d, "short.ckpt"), good_header, b"\0" * 8, hlen=len(good_header) - 1), "corrupt header"),
            (_ckpt(os.path.join(d, "json.ckpt"), b"{not json"), "corrupt header"),
            (_ckpt(os.path.join(d, "utf8.ckpt"), b'{"tensors": [], "x": "\xff\xfe"}'), "corrupt header"),
            (_ckpt(os.path.join(d, "deep.ckpt"), b"[" * 100000 + b"]" * 100000), "corrupt header"),
            (_ckpt(os.path.join(d, "list.ckpt"), [1, 2]), "no list of tensors"),
            (_ckpt(os.path.join(d, "num.ckpt"), 5), "no list of tensors"),
            (_ckpt(os.path.join(d, "none.ckpt"), {"tensors": None}), "no list of tensors"),
            (_ckpt(os.path.join(d, "app.ckpt"), {"tensors": [], "append_dict": [1]}), "append_dict is a list"),
        ]
        for path, words in cases:
            self.assert_bad(path, words)

    def test_a_directory_and_a_missing_file(self):
        self.assert_bad(self.dir, "cannot read")
        missing = os.path.join(self.dir, "missing.ckpt")
        self.assert_bad(missing, "no such file")
        with self.assertRaisesRegex(TypeError, "For 'load_checkpoint', the type of 'ckpt_file_name' should be str"):
            pj.load_checkpoint(5)

    def test_valid_edge_shapes_load(self):
        data = struct.pack("<f", 1.5) + b"\0" * 60
        path = _ckpt(os.path.join(self.dir, "edge.ckpt"),
                     {"tensors": [_rec(name="s", shape=(), nbytes=4), _rec(name="z", shape=(0, 5), offset=64, nbytes=0)]},
                     data)
        out = pj.load_checkpoint(path)
        self.assertEqual((out["s"].shape, out["s"].item()), ((), 1.5))
        self.assertEqual((out["z"].shape, out["z"].size), ((0, 5), 0))


# ---- setters and jit's options ------------------------------------------------------------------
class SetterArguments(unittest.TestCase):
    def check(self, fn, exc, *words):
        with self.assertRaises(exc) as cm:
            fn()
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_set_num_threads(self):
        before = pj.get_num_threads()
        self.assertGreaterEqual(pj.MAX_NUM_THREADS, 1024)
        for bad in (10 ** 9, pj.MAX_NUM_THREADS + 1, 2 ** 32 + 1, 2 ** 64, 0, -1):
            self.check(lambda: pj.set_num_threads(bad), ValueError, "For 'set_num_threads'", "'num_threads'",
                       "[1, %d]" % pj.MAX_NUM_THREADS)
        for bad in (2.0, "2", None, True, [2]):
            self.check(lambda: pj.set_num_threads(bad), TypeError,
                       "For 'set_num_threads', the type of 'num_threads' should be int, but got %s" % type(bad).__name__)
        self.assertEqual(pj.get_num_threads(), before)  # a refused call changes nothing
        try:
            pj.set_num_threads(1)
            self.assertEqual(pj.get_num_threads(), 1)
            self.assertEqual((pj.ones(1000) + 1).sum().item(), 2000.0)
        finally:
            pj.set_num_threads(before)

    def test_set_context(self):
        values = [("max_call_depth", -1, ValueError, "an int >= 1"), ("max_call_depth", 0, ValueError, "an int >= 1"),
                  ("max_call_depth", "deep", TypeError, "should be int, but got str"),
                  ("max_call_depth", True, TypeError, "should be int, but got bool"),
                  ("save_graphs", 5, ValueError, "in [0, 3]"), ("save_graphs", "yes", TypeError, "bool or int"),
                  ("runtime_num_threads", -3, ValueError, "an int >= 0"),
                  ("op_timeout", -1, ValueError, "an int >= 0"), ("jit_syntax_level", 7, ValueError, "in [0, 2]"),
                  ("debug_level", 2, ValueError, "in [0, 1]"),
                  ("deterministic", "maybe", ValueError, "one of 'ON', 'OFF'"),
                  ("deterministic", 1, TypeError, "should be str"),
                  ("memory_optimize_level", "O3", ValueError, "one of 'O0', 'O1'"),
                  ("max_device_memory", "lots", ValueError, "a size in GB"),
                  ("max_device_memory", "0GB", ValueError, "a size in GB"),
                  ("max_device_memory", 4, TypeError, "should be str"),
                  ("ascend_config", [], TypeError, "should be dict"),
                  ("mode", "graph", TypeError, "should be int"), ("mode", True, TypeError, "but got bool"),
                  ("mode", 2, ValueError, "GRAPH_MODE"),
                  ("device_id", -1, ValueError, "in [0, 4095]"), ("device_id", 4096, ValueError, "in [0, 4095]"),
                  ("device_id", "0", TypeError, "should be int"), ("device_target", 5, TypeError, "should be str"),
                  ("device_target", "TPU", ValueError, "device_target")]
        for key, value, exc, words in values:
            self.check(lambda: pj.set_context(**{key: value}), exc, "set_context", key, words)
        # every key is checked before any is set
        before = pj.get_context("max_call_depth")
        self.check(lambda: pj.set_context(max_call_depth=500, save_graphs=9), ValueError, "save_graphs")
        self.assertEqual(pj.get_context("max_call_depth"), before)
        pj.set_context(max_device_memory="3.5GB", deterministic="OFF", save_graphs=False)
        self.assertEqual(pj.get_context("max_device_memory"), "3.5GB")

    def test_set_device(self):
        self.check(lambda: pj.set_device(5), TypeError, "device_target", "should be str")
        self.check(lambda: pj.set_device("CPU", -1), ValueError, "device_id", "in [0, 4095]")
        self.check(lambda: pj.set_device("CPU", 1.0), TypeError, "device_id", "should be int")

    def test_set_seed(self):
        before = pj.get_seed()
        try:
            for bad in (-1, 2 ** 64):
                self.check(lambda: pj.set_seed(bad), ValueError, "For 'set_seed'", "'seed'")
            for bad in ("1", 1.5, None, True):
                self.check(lambda: pj.set_seed(bad), TypeError, "For 'set_seed', the type of 'seed' should be int")
            self.assertEqual(pj.get_seed(), before)
            pj.set_seed(2 ** 64 - 1)
            self.assertEqual(pj.get_seed(), 2 ** 64 - 1)
        finally:
            pj.set_seed(before)

    def test_set_jit_config(self):
        before = pj.set_jit_config()
        for key, lo in (("recompile_limit", 1), ("inline_depth", 0), ("instruction_budget", 1), ("loop_limit", 0)):
            for bad in (lo - 1, 2 ** 31, 2 ** 32 + 8, 2 ** 70):  # (2**32 + 8 once wrapped around to 8)
                self.check(lambda: pj.set_jit_config(**{key: bad}), ValueError,
                           "For 'set_jit_config', the '%s' should be in [%d, 1073741824]" % (key, lo))
            for bad in (True, 2.0, "8"):
                self.check(lambda: pj.set_jit_config(**{key: bad}), TypeError,
                           "For 'set_jit_config', the type of '%s' should be int" % key)
        self.assertEqual(pj.set_jit_config(), before)

    def test_jit_options(self):
        def f(x):
            return x + 1

        cases = [(dict(backend="bogus"), ValueError, "'backend' should be one of '', 'ms_backend', 'GE'"),
                 (dict(backend=5), TypeError, "the type of 'backend' should be str"),
                 (dict(jit_config=5), TypeError, "the type of 'jit_config' should be JitConfig, dict or None"),
                 (dict(jit_config="O2"), TypeError, "'jit_config'"),
                 (dict(compile_once=5), TypeError, "the type of 'compile_once' should be bool"),
                 (dict(fullgraph="yes"), TypeError, "the type of 'fullgraph' should be bool"),
                 (dict(recompile_limit=-1), ValueError, "the 'recompile_limit' should be in [1, 1073741824]"),
                 (dict(recompile_limit=2 ** 32 + 1), ValueError, "'recompile_limit'"),
                 (dict(recompile_limit="x"), TypeError, "the type of 'recompile_limit' should be int"),
                 (dict(recompile_limit=True), TypeError, "the type of 'recompile_limit' should be int"),
                 (dict(inline_depth=-1), ValueError, "the 'inline_depth' should be in [0, 1073741824]"),
                 (dict(inline_depth=10 ** 30), ValueError, "'inline_depth'"),
                 (dict(exc_mode=5), TypeError, "the type of 'exc_mode' should be str"),
                 (dict(infer_boost="maybe"), ValueError, "the 'infer_boost' should be one of 'on', 'off'"),
                 (dict(debug_level="LOUD"), ValueError, "'debug_level'"),
                 (dict(jit_syntax_level=2), TypeError, "'jit_syntax_level'"),
                 (dict(mode="XJit"), ValueError, "mode"), (dict(dynamic=2), ValueError, "dynamic")]
        for kwargs, exc, words in cases:
            self.check(lambda: pj.jit(f, **kwargs), exc, words)
            self.check(lambda: pj.jit(**kwargs)(f), exc, words)  # the decorator form
        self.check(lambda: pj.jit(5), TypeError, "jit expects a function")
        j = pj.jit(f, backend="ms_backend", jit_config={"jit_level": "O1"}, compile_once=True, fullgraph=False,
                   recompile_limit=4, inline_depth=0, exc_mode="auto", infer_boost="off", debug_level="RELEASE")
        self.assertEqual(j(T([1.0])).tolist(), [2.0])


class LikeArguments(unittest.TestCase):
    def test_like_functions_name_their_input(self):
        for name, call in (("zeros_like", lambda a: pj.ops.zeros_like(a)), ("ones_like", lambda a: pj.ones_like(a)),
                           ("full_like", lambda a: pj.full_like(a, 2.0))):
            for bad in (None, [1.0, 2.0], 3):
                with self.assertRaises(TypeError) as cm:
                    call(bad)
                self.assertEqual(str(cm.exception), "For '%s', the type of 'input' should be Tensor, but got %s."
                                 % (name, type(bad).__name__))
            out = call(T([[1, 2]], dtype=pj.int32))
            self.assertEqual((out.shape, out.dtype), ((1, 2), pj.int32))


# ---- layer calls --------------------------------------------------------------------------------
def _layers():
    """(layer, a good input, [(bad input, exception type, words of its message)])."""
    not_tensor = lambda name, arg="x": [  # noqa: E731
        (None, TypeError, "For '%s', the type of '%s' should be Tensor, but got NoneType." % (name, arg)),
        ([[1.0, 2.0]], TypeError, "For '%s', the type of '%s' should be Tensor, but got list." % (name, arg)),
        (3.0, TypeError, "For '%s', the type of '%s' should be Tensor, but got float." % (name, arg))]
    return [
        (nn.Dense(4, 8), pj.ones(2, 4), not_tensor("Dense") + [
            (pj.ones(2, 3), ValueError, "For 'Dense', the size of 'x' at axis 1 should be in_channels=4, but got shape (2, 3)."),
            (T(1.0), ValueError, "For 'Dense', the dimension of 'x' should be at least 1, but got 0")]),
        (nn.Conv2d(3, 4, 3), pj.ones(1, 3, 5, 5), not_tensor("Conv2d") + [
            (pj.ones(3, 5, 5), ValueError, "For 'Conv2d', the dimension of 'x' should be 4, but got 3 (shape (3, 5, 5))"),
            (pj.ones(1, 2, 5, 5), ValueError, "in_channels=3, but got shape (1, 2, 5, 5)")]),
        (nn.Conv2dTranspose(3, 4, 3), pj.ones(1, 3, 5, 5), not_tensor("Conv2dTranspose") + [
            (pj.ones(1, 4, 5, 5), ValueError, "For 'Conv2dTranspose', the size of 'x' at axis 1 should be in_channels=3")]),
        (nn.BatchNorm2d(3), pj.ones(2, 3, 2, 2), not_tensor("BatchNorm2d") + [
            (pj.ones(2, 4, 2, 2), ValueError, "num_features=3"), (pj.ones(2, 3), ValueError, "should be 4, but got 2")]),
        (nn.BatchNorm1d(3), pj.ones(2, 3), not_tensor("BatchNorm1d") + [
            (pj.ones(2, 3, 2, 2), ValueError, "For 'BatchNorm1d', the dimension of 'x' should be 2 or 3, but got 4")]),
        (nn.LayerNorm((4,)), pj.ones(2, 4), not_tensor("LayerNorm") + [
            (T(1.0), ValueError, "For 'LayerNorm', the dimension of 'x' should be at least 1")]),
        (nn.GroupNorm(2, 4), pj.ones(2, 4), not_tensor("GroupNorm") + [
            (pj.ones(2, 3), ValueError, "num_channels=4"), (pj.ones(4), ValueError, "should be at least 2")]),
        (nn.MaxPool2d(2), pj.ones(1, 1, 4, 4), not_tensor("MaxPool2d") + [
            (pj.ones(4, 4), ValueError, "For 'MaxPool2d', the dimension of 'x' should be 3 or 4, but got 2")]),
        (nn.AvgPool2d(2), pj.ones(1, 1, 4, 4), not_tensor("AvgPool2d")),
        (nn.AdaptiveAvgPool2d(2), pj.ones(1, 1, 4, 4), not_tensor("AdaptiveAvgPool2d") + [
            (pj.ones(4), ValueError, "For 'AdaptiveAvgPool2d', the dimension of 'x' should be 3 or 4, but got 1")]),
        (nn.Flatten(), pj.ones(2, 2, 2), not_tensor("Flatten")),
        (nn.Dropout(p=0.5), pj.ones(4), not_tensor("Dropout")),
        (nn.Embedding(4, 3), T([1, 2], dtype=pj.int32), not_tensor("Embedding", "ids")),
        (nn.ReLU(), pj.ones(2), not_tensor("ReLU")), (nn.ReLU6(), pj.ones(2), not_tensor("ReLU6")),
        (nn.LeakyReLU(), pj.ones(2), not_tensor("LeakyReLU")), (nn.GELU(), pj.ones(2), not_tensor("GELU")),
        (nn.SiLU(), pj.ones(2), not_tensor("SiLU")), (nn.Sigmoid(), pj.ones(2), not_tensor("Sigmoid")),
        (nn.Tanh(), pj.ones(2), not_tensor("Tanh")), (nn.Softmax(), pj.ones(2), not_tensor("Softmax")),
        (nn.LogSoftmax(), pj.ones(2), not_tensor("LogSoftmax")), (nn.HSwish(), pj.ones(2), not_tensor("HSwish")),
        (nn.HSigmoid(), pj.ones(2), not_tensor("HSigmoid", "input_x")),
        (nn.SequentialCell([nn.Dense(4, 2), nn.ReLU()]), pj.ones(1, 4), not_tensor("Dense")),
    ]


class LayerArguments(unittest.TestCase):
    def test_every_layer_names_itself_and_the_argument(self):
        for layer, good, bad in _layers():
            layer(good)  # (the good input is accepted)
            for x, exc, words in bad:
                with self.assertRaises(exc) as cm:
                    layer(x)
                self.assertIn(words, str(cm.exception), type(layer).__name__)

    def test_jitted_layers_raise_the_same(self):
        for layer, good, bad in _layers():
            if isinstance(layer, nn.Dropout):
                continue
            jitted = pj.jit(layer)
            self.assertEqual(jitted(good).tolist(), layer(good).tolist())
            for x, exc, words in bad:
                with self.assertRaises(exc) as cm:
                    jitted(x)
                self.assertIn(words, str(cm.exception), type(layer).__name__)
            self.assertEqual(jitted(good).tolist(), layer(good).tolist())  # still served after the refusals
            if CAPTURE_ON:
                self.assertGreaterEqual(pj.jit_stats(jitted)["graphs"], 1, type(layer).__name__)
            else:
                assert_ran_eagerly(self, jitted)

    def test_losses_name_logits_and_labels(self):
        x, y = pj.ones(2, 3), pj.zeros(2, 3)
        for loss in (nn.MSELoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.BCEWithLogitsLoss(),
                     nn.SoftmaxCrossEntropyWithLogits()):
            name = type(loss).__name__
            loss(x, y)
            for a, b, arg in ((None, y, "logits"), (x, None, "labels"), ([1.0], y, "logits"), (x, 0, "labels")):
                with self.assertRaises(TypeError) as cm:
                    loss(a, b)
                self.assertIn("For '%s', the type of '%s' should be Tensor, but got %s."
                              % (name, arg, type(a if arg == "logits" else b).__name__), str(cm.exception))
        labels = T([0, 2], dtype=pj.int32)
        for loss in (nn.CrossEntropyLoss(), nn.NLLLoss()):
            loss(x, labels)
            with self.assertRaisesRegex(TypeError, "For '%s', the type of 'labels' should be Tensor, but got list"
                                        % type(loss).__name__):
                loss(x, [0, 2])

    def test_a_dynamic_batch_stays_dynamic_through_the_check(self):
        jitted = pj.jit(nn.Dense(4, 2), dynamic=1)
        for n in (2, 3, 5):
            self.assertEqual(jitted(pj.ones(n, 4)).shape, (n, 2))
        if CAPTURE_ON:
            st = pj.jit_stats(jitted)
            self.assertEqual(st["graphs"], 1, st)
            self.assertEqual(st["recompiles"], 0, st)
        else:
            assert_ran_eagerly(self, jitted)


if __name__ == "__main__":
    unittest.main()
