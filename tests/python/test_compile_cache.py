"""The persistent compile cache (issue 46): a second process that runs the same program loads what
the first captured, validates it, and computes the same bits; stale, corrupt, truncated and
concurrently written artifacts are never trusted; another Python never reads this one's."""
import glob
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A program in two files: the jitted Cell's construct calls a helper of another module, so that a
# change to that module (not to the jitted code, whose bytes key the artifact) makes entries stale.
HELPERS = """
import pijit as pj
from pijit import nn, ops

def scale(x):
    return x * {factor}

class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.act = nn.ReLU()

    def construct(self, x):
        return scale(self.act(self.fc(x)))
"""

PROGRAM = """
import json, sys
import pijit as pj
from pijit import nn
import helpers
pj.set_seed(0)
net = nn.SequentialCell([helpers.Block(), helpers.Block()])
f = pj.jit(net)
rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2
x = pj.Tensor([[0.5 * (i + j) - 1.0 for j in range(4)] for i in range(rows)], pj.float32)
fused_before = pj._C.fused_code_stats()
out = f(x)
fused_after = pj._C.fused_code_stats()
again = f(x)
eager = net(x)
other = None
if "--new-instance" in sys.argv:  # an equal model, not the one the entry's identity checks bound
    pj.set_seed(1)
    net2 = nn.SequentialCell([helpers.Block(), helpers.Block()])
    other = [pj.jit(net2)(x).tolist(), net2(x).tolist()]
st = pj.jit_stats(f)
entries = st["entries"]
def code_of(co):  # (constants that are objects by their class: the graph runner's address differs)
    plain = (int, float, str, type(None))
    return [co.co_code.hex(), co.co_names, co.co_varnames, co.co_cellvars, co.co_freevars,
            [c if isinstance(c, plain) else type(c).__name__ for c in co.co_consts],
            [co.co_argcount, co.co_kwonlyargcount, co.co_flags, co.co_nlocals, co.co_stacksize, co.co_firstlineno,
             co.co_name, getattr(co, "co_qualname", None)]]
print(json.dumps({"out": out.tolist(), "again": again.tolist(), "eager": eager.tolist(), "other": other,
                  "graphs": st["graphs"], "recompiles": st["recompiles"], "hits": st["cache_hits"],
                  "graph_text": [e["graph"] for e in entries], "num_guards": [e["num_guards"] for e in entries],
                  "direct": [e["direct"] for e in entries],
                  "bytecode": [code_of(e["rewritten_code"]) for e in entries],
                  "from_disk": [e["from_disk"] for e in entries],
                  "capture_ms": [e["capture_ms"] for e in entries],
                  "fused": {k: fused_after[k] - fused_before[k] for k in fused_after},
                  "backend": pj._C.fused_backend(),
                  "stats": pj._C.compile_cache_info()}))
"""


# A jitted function whose first call's graph raises (an index out of range, after a fused kernel
# ran): argv[1] "fail" calls it so and ends the process at once, "ok" calls it well, "fail-ok" both.
GATHER = """
import json, os, sys
import pijit as pj
from pijit import ops
@pj.jit
def f(x, idx):
    y = ops.relu(x * 2.0 - 1.0) + 0.5
    return ops.gather(y, idx, 0)
x = pj.Tensor([[1.0, -2.0], [3.0, 4.0]], pj.float32)
mode = sys.argv[1]
if mode.startswith("fail"):
    try:
        f(x, pj.Tensor([5], pj.int32))
        raise SystemExit("no IndexError")
    except IndexError:
        pass
before = pj._C.fused_code_stats()
out = f(x, pj.Tensor([1], pj.int32)).tolist() if mode != "fail" else None
after = pj._C.fused_code_stats()
print(json.dumps({"out": out, "fused": {k: after[k] - before[k] for k in after}, "backend": pj._C.fused_backend(),
                  "stats": pj._C.compile_cache_info()}))
sys.stdout.flush()
os._exit(0)  # (no orderly exit: what the process wrote by now is all it leaves)
"""

# The jitted Block's first call under an eager gradient tape (its forward runs the tape's plan).
TAPE = """
import json
import pijit as pj
import helpers
pj.set_seed(0)
f = pj.jit(helpers.Block())
x = pj.Tensor([[0.5 * (i + j) - 1.0 for j in range(4)] for i in range(2)], pj.float32)
before = pj._C.fused_code_stats()
value, grad = pj.value_and_grad(lambda x: f(x).sum())(x)
after = pj._C.fused_code_stats()
print(json.dumps({"value": value.tolist(), "grad": grad.tolist(), "fused": {k: after[k] - before[k] for k in after},
                  "backend": pj._C.fused_backend(), "stats": pj._C.compile_cache_info()}))
"""

# A constant the frame holds, returned: the object the frame holds in this process (`is`).
CONSTANT = """
import json
import pijit as pj
K = tuple([1, 2])
NAME = "".join(["dense", "_1"])
@pj.jit
def f(x):
    return x * 2, K, NAME
r = f(pj.ones((2,)))
print(json.dumps({"same": [r[1] is K, r[2] is NAME], "from_disk": pj.jit_stats(f)["entries"][0]["from_disk"]}))
"""

def python_of(version):
    try:
        prefix = subprocess.run(["pyenv", "prefix", version], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True).stdout.strip()
    except OSError:
        return None
    exe = os.path.join(prefix, "bin", "python") if prefix else ""
    so = glob.glob(os.path.join(ROOT, "pyscripts", "pijit", "_C.cpython-%s*.so" % version.replace(".", "")))
    return exe if os.path.exists(exe) and so else None


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class CompileCache(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="pijit-cc-")
        self.cache = os.path.join(self.work, "cache")
        os.mkdir(self.cache, 0o700)
        self.write_helpers(2.0)
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(PROGRAM)

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def write_helpers(self, factor):
        path = os.path.join(self.work, "helpers.py")
        old = os.stat(path).st_mtime_ns if os.path.exists(path) else 0
        with open(path, "w") as f:
            f.write(textwrap.dedent(HELPERS.format(factor=factor)))
        os.utime(path, ns=(old + 10**9, old + 10**9))  # (a later mtime even within the clock's step)

    def env(self, **extra):
        env = dict(os.environ)
        env.pop("PIJIT_STRESS", None)  # (stress mode keeps the cache off)
        env.update({"PYTHONPATH": os.path.join(ROOT, "pyscripts") + os.pathsep + self.work,
                    "PIJIT_CACHE_DIR": self.cache, "PYTHONDONTWRITEBYTECODE": "1"})
        env.update(extra)
        return env

    def run_prog(self, *args, python=None, env=None, check=True):
        p = subprocess.run([python or sys.executable, os.path.join(self.work, "prog.py")] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           env=env or self.env(), timeout=300)
        if check:
            self.assertEqual(p.returncode, 0, p.stderr)
            return json.loads(p.stdout.strip().splitlines()[-1])
        return p

    def artifacts(self):
        return glob.glob(os.path.join(self.cache, "graphs", "*.pjc"))

    def assert_same_bits(self, a, b):
        self.assertEqual(json.dumps(a["out"]), json.dumps(b["out"]))
        self.assertEqual(json.dumps(a["out"]), json.dumps(a["eager"]))
        self.assertEqual(json.dumps(a["again"]), json.dumps(a["out"]))

    def test_a_second_process_loads_the_entry_and_computes_the_same_bits(self):
        first = self.run_prog()
        self.assertEqual(first["from_disk"], [False])
        self.assertGreater(first["capture_ms"][0], 0)
        self.assertEqual(first["stats"]["entries_written"], 1)
        self.assertEqual(len(self.artifacts()), 1)
        second = self.run_prog()
        self.assertEqual(second["from_disk"], [True])
        self.assertEqual(second["capture_ms"], [0.0])
        self.assertEqual((second["stats"]["artifacts_read"], second["stats"]["entries_loaded"]), (1, 1))
        self.assertEqual(second["stats"]["entries_written"], 0)
        self.assert_same_bits(second, first)
        # the same entry as the capture made: one graph, the same IR and guard count, a direct call,
        # no recompile, and the second call a hit
        for key in ("graphs", "recompiles", "hits", "graph_text", "num_guards", "direct", "bytecode"):
            self.assertEqual(second[key], first[key], key)
        self.assertEqual((second["graphs"], second["recompiles"], second["hits"]), (1, 0, 1))
        # the rewritten bytecode came from the artifact (the same instructions, names and constants
        # as emitting made), and it is what runs where the direct call is off
        self.assertEqual((first["stats"]["codes_loaded"], second["stats"]["codes_loaded"]), (0, 1))
        third = self.run_prog(env=self.env(PIJIT_DEBUG_NO_DIRECT="1"))
        self.assertEqual((third["from_disk"], third["stats"]["codes_loaded"]), ([True], 1))
        self.assert_same_bits(third, first)

    def test_the_fused_kernels_machine_code_comes_from_disk(self):
        first = self.run_prog()
        if first["backend"] == "interpreter":
            self.skipTest("no machine code for fused kernels here")
        self.assertGreaterEqual(first["fused"]["compiled"], 1)
        self.assertEqual(first["fused"]["loaded"], 0)
        self.assertEqual(first["stats"]["kernels_written"], 1)  # (after the first launch)
        self.assertEqual(first["stats"]["entries_written"], 1)
        second = self.run_prog()
        self.assertEqual(second["from_disk"], [True])
        self.assertGreaterEqual(second["stats"]["kernels_loaded"], 1)
        self.assertEqual(second["fused"]["compiled"], 0)  # the first call compiled no kernel
        self.assertGreaterEqual(second["fused"]["loaded"], 1)
        self.assertEqual(second["stats"]["kernels_written"], 0)
        self.assert_same_bits(first, second)
        self.assertEqual(json.dumps(second["out"]), json.dumps(first["out"]))
        # Code for another ISA is another artifact's (the key names the backend): compiled again.
        if first["backend"] == "asmjit-avx512":
            avx2 = self.run_prog(env=self.env(PIJIT_FUSED_ISA="avx2"))
            self.assertEqual(avx2["backend"], "asmjit-avx2")
            self.assertEqual(avx2["from_disk"], [False])
            self.assertGreaterEqual(avx2["fused"]["compiled"], 1)
            self.assertEqual(avx2["fused"]["loaded"], 0)
            self.assertEqual(json.dumps(avx2["out"]), json.dumps(first["out"]))
            again = self.run_prog(env=self.env(PIJIT_FUSED_ISA="avx2"))
            self.assertEqual((again["from_disk"], again["fused"]["compiled"]), ([True], 0))
            self.assertEqual(len(self.artifacts()), 2)

    def write_prog(self, text):
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent(text))

    def test_a_launch_that_raises_leaves_the_kernels_to_a_later_one(self):
        self.write_prog(GATHER)
        first = self.run_prog("fail")
        if first["backend"] == "interpreter":
            self.skipTest("no machine code for fused kernels here")
        self.assertEqual((first["stats"]["entries_written"], first["stats"]["kernels_written"]), (1, 0))
        # The next process takes the entry, which holds no kernels yet: its first launch adds them.
        second = self.run_prog("ok")
        self.assertEqual((second["stats"]["entries_loaded"], second["stats"]["kernels_written"]), (1, 1))
        self.assertGreaterEqual(second["fused"]["compiled"], 1)
        third = self.run_prog("ok")
        self.assertGreaterEqual(third["stats"]["kernels_loaded"], 1)
        self.assertEqual(third["fused"]["compiled"], 0)
        self.assertEqual(second["out"], [[5.5, 7.5]])
        self.assertEqual(third["out"], second["out"])
        # In one process, the launch after the one that raised stores them.
        shutil.rmtree(self.cache)
        os.mkdir(self.cache, 0o700)
        both = self.run_prog("fail-ok")
        self.assertEqual((both["stats"]["entries_written"], both["stats"]["kernels_written"]), (1, 1))
        self.assertEqual(both["out"], second["out"])

    def test_a_first_launch_under_a_gradient_tape_stores_its_kernels(self):
        self.write_prog(TAPE)
        first = self.run_prog()
        if first["backend"] == "interpreter":
            self.skipTest("no machine code for fused kernels here")
        self.assertEqual(first["stats"]["kernels_written"], 1)
        second = self.run_prog()
        self.assertEqual(second["stats"]["entries_loaded"], 1)
        self.assertGreaterEqual(second["stats"]["kernels_loaded"], 1)
        self.assertEqual(second["fused"]["loaded"], second["stats"]["kernels_loaded"])
        self.assertLess(second["fused"]["compiled"], first["fused"]["compiled"])
        self.assertEqual(json.dumps([second["value"], second["grad"]]), json.dumps([first["value"], first["grad"]]))

    def test_without_machine_code_no_kernel_is_stored_or_loaded(self):
        env = self.env(PIJIT_FUSED_JIT="0")
        first = self.run_prog(env=env)
        second = self.run_prog(env=env)
        for r in (first, second):
            self.assertEqual(r["backend"], "interpreter")
            self.assertEqual(r["fused"], {"compiled": 0, "loaded": 0})
            self.assertEqual((r["stats"]["kernels_written"], r["stats"]["kernels_loaded"]), (0, 0))
        self.assertEqual(second["from_disk"], [True])
        self.assert_same_bits(first, second)
        self.assert_same_bits(first, self.run_prog())  # (machine code: the same bits)

    def test_a_constant_the_frame_holds_is_this_processs_object(self):
        self.write_prog(CONSTANT)
        first, second = self.run_prog(), self.run_prog()
        self.assertEqual(first, {"same": [True, True], "from_disk": False})
        self.assertEqual(second, {"same": [True, True], "from_disk": True})

    def test_guards_still_decide_and_the_artifact_keeps_each_shape(self):
        self.run_prog("2")
        other = self.run_prog("3")  # the stored entry's guards fail (x.shape[0]): captured, added
        self.assertEqual(other["from_disk"], [False])
        self.assertEqual(other["stats"]["entries_written"], 1)
        for rows in ("2", "3"):
            again = self.run_prog(rows)
            self.assertEqual(again["from_disk"], [True], rows)
            self.assertEqual(json.dumps(again["out"]), json.dumps(again["eager"]))

    def test_identity_checks_bind_to_this_process_objects_and_still_tell_instances_apart(self):
        self.run_prog()
        r = self.run_prog("2", "--new-instance")
        # (entries most recently hit first: the second model's binds the stored entry to its objects)
        self.assertEqual(r["from_disk"], [True, True])
        self.assertEqual(r["stats"]["entries_loaded"], 2)
        self.assertEqual(len(self.artifacts()), 1)
        jitted, eager = r["other"]
        self.assertEqual(json.dumps(jitted), json.dumps(eager))  # another instance: its own parameters
        self.assertNotEqual(json.dumps(jitted), json.dumps(r["out"]))

    def test_a_changed_module_makes_its_entries_stale(self):
        first = self.run_prog()
        self.write_helpers(3.0)  # scale() now multiplies by 3: the jitted code's bytes are the same
        second = self.run_prog()
        self.assertEqual(second["from_disk"], [False])
        self.assertEqual(second["stats"]["stale"], 1)
        self.assert_same_bits(second, second)
        ratio = second["out"][0][0] / first["out"][0][0] if first["out"][0][0] else 1.5
        self.assertAlmostEqual(ratio, 1.5)
        third = self.run_prog()  # the rewritten artifact holds the new entry only
        self.assertEqual(third["from_disk"], [True])
        self.assertEqual(json.dumps(third["out"]), json.dumps(second["out"]))

    def test_corrupt_and_truncated_artifacts_are_ignored_and_rewritten(self):
        good = self.run_prog()
        path, = self.artifacts()
        with open(path, "rb") as f:
            data = f.read()
        for bad in (data[:-1] + bytes([data[-1] ^ 1]), data[: len(data) // 2], b"", data[:40]):
            with open(path, "wb") as f:
                f.write(bad)
            r = self.run_prog()
            self.assertEqual(r["from_disk"], [False])
            self.assertEqual(r["stats"]["rejected"], 1)
            self.assertEqual(r["stats"]["entries_written"], 1)
            self.assert_same_bits(r, good)
            self.assertEqual(self.run_prog()["from_disk"], [True])  # rewritten whole
            with open(path, "rb") as f:
                data = f.read()

    def test_concurrent_writers_leave_one_valid_artifact(self):
        procs = [subprocess.Popen([sys.executable, os.path.join(self.work, "prog.py")], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, universal_newlines=True, env=self.env())
                 for _ in range(4)]
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            outs.append(json.loads(out.strip().splitlines()[-1]))
        for o in outs[1:]:
            self.assertEqual(json.dumps(o["out"]), json.dumps(outs[0]["out"]))
        self.assertEqual(len(self.artifacts()), 1)
        self.assertEqual(glob.glob(os.path.join(self.cache, "graphs", "*.tmp.*")), [])
        again = self.run_prog()
        self.assertEqual(again["from_disk"], [True])
        self.assert_same_bits(again, outs[0])

    def test_another_python_never_reads_this_ones_artifacts(self):
        others = [v for v in ("3.7", "3.9") if python_of(v) and not sys.version.startswith(v + ".")]
        self.assertTrue(others, "needs pijit built for 3.7 or 3.9 beside this Python (tools/build.sh builds both)")
        first = self.run_prog()
        r = self.run_prog(python=python_of(others[0]))
        self.assertEqual(r["from_disk"], [False])
        self.assertEqual(json.dumps(r["out"]), json.dumps(first["out"]))
        self.assertEqual(len(self.artifacts()), 2)
        self.assertEqual(self.run_prog()["from_disk"], [True])
        self.assertEqual(self.run_prog(python=python_of(others[0]))["from_disk"], [True])

    def test_the_cache_can_be_turned_off_and_moved_as_mindspore_says(self):
        for off in ({"PIJIT_CACHE_DIR": ""}, {"MS_COMPILER_CACHE_ENABLE": "0"}):
            r = self.run_prog(env=self.env(**off))
            self.assertEqual(r["stats"]["folder"], None)
            self.assertEqual(r["stats"]["entries_written"], 0)
        self.assertEqual(self.artifacts(), [])
        moved = os.path.join(self.work, "ms_cache")
        env = self.env(MS_COMPILER_CACHE_PATH=moved)
        del env["PIJIT_CACHE_DIR"]
        self.run_prog(env=env)
        self.assertEqual(self.run_prog(env=env)["from_disk"], [True])
        self.assertEqual(len(glob.glob(os.path.join(moved, "graphs", "*.pjc"))), 1)

    def test_a_folder_others_may_write_is_refused_with_one_warning(self):
        os.chmod(self.cache, 0o777)
        p = self.run_prog(check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("not using the compile cache"), 1, p.stderr)
        self.assertEqual(json.loads(p.stdout.strip().splitlines()[-1])["stats"]["folder"], None)
        os.chmod(self.cache, 0o700)

    def test_a_graph_break_is_not_written_and_says_why(self):
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json
                import pijit as pj
                @pj.jit
                def f(x):
                    y = x + 1
                    if float(y.sum()) > 0:
                        return y * 2
                    return y
                out = f(pj.ones((2,)))
                print(json.dumps({"out": out.tolist(), "stats": pj._C.compile_cache_info()}))
            """))
        for _ in range(2):
            r = self.run_prog()
            self.assertEqual(r["out"], [4.0, 4.0])
            self.assertEqual(r["stats"]["refusals"], {"a graph break": 1})
            self.assertEqual(r["stats"]["entries_loaded"], 0)

    def test_keyword_only_and_star_arguments_keep_their_stored_bytecode(self):
        # (3.11 runs rewritten code with every argument a positional slot: the stored code's
        # signature is that one, not the function's)
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json
                import pijit as pj
                @pj.jit
                def step(x, *rest, scale=2.0, **opts):
                    return x * scale + len(rest) + len(opts)
                a = step(pj.ones((2,)), 1, 2, scale=3.0, z=1)
                b = step(pj.ones((2,)), 1, 2, scale=3.0, z=1)
                e = pj.jit_stats(step)["entries"][0]
                print(json.dumps({"a": a.tolist(), "b": b.tolist(), "from_disk": e["from_disk"],
                                  "codes": pj._C.compile_cache_info()["codes_loaded"]}))
            """))
        runs = [self.run_prog(), self.run_prog(), self.run_prog(env=self.env(PIJIT_DEBUG_NO_DIRECT="1"))]
        self.assertEqual([(r["from_disk"], r["codes"]) for r in runs], [(False, 0), (True, 1), (True, 1)])
        for r in runs:
            self.assertEqual((r["a"], r["b"]), ([6.0, 6.0], [6.0, 6.0]))

    def test_a_loaded_entry_replays_its_side_effects(self):
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json
                import pijit as pj
                seen = []
                box = {"n": 0}
                @pj.jit
                def f(x, k):
                    y = x * k
                    print("scaled by", k)
                    seen.append(k)
                    box["n"] = box["n"] + 1
                    return y + 1, [y, k]
                a = f(pj.ones((2,)), 3)
                b = f(pj.ones((2,)), 3)
                es = pj.jit_stats(f)["entries"]
                print(json.dumps({"a": [a[0].tolist(), a[1][0].tolist(), a[1][1]], "b": b[0].tolist(), "seen": seen,
                                  "box": box, "from_disk": [e["from_disk"] for e in es]}))
            """))
        outs = []
        for _ in range(2):
            p = self.run_prog(check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.count("scaled by 3"), 2, p.stdout)
            outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        # (box["n"] moved between the calls: two entries, both stored, both loaded)
        self.assertEqual([o["from_disk"] for o in outs], [[False, False], [True, True]])
        for o in outs:
            self.assertEqual((o["a"], o["b"], o["seen"], o["box"]), ([[4.0, 4.0], [3.0, 3.0], 3], [4.0, 4.0], [3, 3],
                                                                     {"n": 2}))

    def test_a_training_step_loads_and_trains_the_same(self):
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json
                import pijit as pj
                from pijit import nn
                pj.set_seed(0)
                body = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
                opt = nn.SGD(body.trainable_params(), learning_rate=0.1, momentum=0.9)
                step = pj.jit(nn.TrainOneStepCell(nn.WithLossCell(body, nn.CrossEntropyLoss()), opt))
                x = pj.Tensor([[0.1 * (i - j) for j in range(6)] for i in range(4)], pj.float32)
                y = pj.Tensor([0, 1, 2, 1], pj.int32)
                losses = [repr(float(step(x, y))) for _ in range(3)]
                es = pj.jit_stats(step)["entries"]
                print(json.dumps({"losses": losses, "weights": [p.tolist() for p in body.trainable_params()],
                                  "from_disk": [e["from_disk"] for e in es]}))
            """))
        first, second = self.run_prog(), self.run_prog()
        self.assertEqual((first["from_disk"], second["from_disk"]), ([False], [True]))
        self.assertEqual(first["losses"], second["losses"])
        self.assertEqual(json.dumps(first["weights"]), json.dumps(second["weights"]))
        self.assertNotEqual(first["losses"][0], first["losses"][2])  # (it trained)

    def test_a_program_without_a_file_is_told_apart_by_its_code(self):
        # python -c (and a notebook's cells): no module file stamps what __main__'s functions do
        prog = textwrap.dedent("""
            import json, sys
            import pijit as pj
            @pj.jit
            def f(x):
                return helper(x) + 1
            def helper(x):
                return x * FACTOR
            out = f(pj.ones((2,)))
            es = pj.jit_stats(f)["entries"]
            print(json.dumps({"out": out.tolist(), "from_disk": [e["from_disk"] for e in es]}))
        """)
        outs = []
        for factor in ("2.0", "2.0", "3.0", "3.0"):
            p = subprocess.run([sys.executable, "-c", prog.replace("FACTOR", factor)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, env=self.env(), timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        self.assertEqual([o["out"] for o in outs], [[3.0, 3.0], [3.0, 3.0], [4.0, 4.0], [4.0, 4.0]])
        self.assertEqual([o["from_disk"] for o in outs], [[False], [True], [False], [True]])

    def test_a_bound_object_must_hold_what_it_held(self):
        # an identity guard on a library object whose state library code read for real at capture
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json, sys
                import pijit as pj
                from pijit import ops
                SM = ops.Softmax(axis=int(sys.argv[1]))
                @pj.jit
                def f(x):
                    return SM(x) * 2
                x = pj.Tensor([[1.0, 2.0], [3.0, 5.0]], pj.float32)
                out = f(x)
                es = pj.jit_stats(f)["entries"]
                print(json.dumps({"out": out.tolist(), "eager": (SM(x) * 2).tolist(),
                                  "from_disk": [e["from_disk"] for e in es]}))
            """))
        runs = [self.run_prog(axis) for axis in ("1", "0", "1", "0")]
        for r in runs:
            self.assertEqual(json.dumps(r["out"]), json.dumps(r["eager"]))
        self.assertNotEqual(runs[0]["out"], runs[1]["out"])
        self.assertEqual([r["from_disk"] for r in runs], [[False], [False], [True], [True]])

    def test_what_depends_on_the_hash_seed_is_not_stored(self):
        with open(os.path.join(self.work, "prog.py"), "w") as f:
            f.write(textwrap.dedent("""
                import json
                import pijit as pj
                @pj.jit
                def f(x):
                    order = list({"w1", "w2", "w3", "w4"})  # (an order each process salts anew)
                    return x * (order.index("w1") + 1)
                out = f(pj.ones((2,)))
                order = list({"w1", "w2", "w3", "w4"})
                print(json.dumps({"out": out.tolist(), "want": [float(order.index("w1") + 1)] * 2,
                                  "stats": pj._C.compile_cache_info()}))
            """))
        for seed in ("1", "2", "3", "4"):
            r = self.run_prog(env=self.env(PYTHONHASHSEED=seed))
            self.assertEqual(r["out"], r["want"], seed)
            self.assertEqual(r["stats"]["entries_loaded"], 0)
            self.assertIn("a value that depends on the process's str hashes (hash(), a set of strs)", r["stats"]["refusals"])

    def test_cache_info_and_clear(self):
        self.run_prog()
        env = self.env()
        run = lambda *a: subprocess.run([sys.executable, "-m", "pijit", "cache"] + list(a), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, universal_newlines=True, env=env)
        p = run("info")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("pijit cache: %s" % self.cache, p.stdout)
        self.assertRegex(p.stdout, r"graphs/\s+1 files")
        p = run("clear")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("removed 1 files", p.stdout)
        self.assertEqual(self.artifacts(), [])
        self.assertEqual(self.run_prog()["from_disk"], [False])


if __name__ == "__main__":
    unittest.main()
