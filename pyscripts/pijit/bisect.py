"""`python -m pijit bisect -- command args...`: which captured function makes a command fail.

For a command that fails under pijit and passes with capture off, bisect reruns it with PIJIT_ONLY
naming halves of the functions the failing run captured, down to one: the culprit. Then it reruns
the culprit alone with each stage switch of the runtime in turn to say which stage is at fault,
and once more with PIJIT_DUMP_DIR to leave its dump. One line per run; the last line names the
culprit, `culprit: module:qualname`.

    run 1    the command as given (under pijit): it must fail
    run 2    capture off (PIJIT_ONLY=-:-, a pattern no code object matches): it must pass
    run 3..  halving, one run per level: a half that fails is kept; a half that passes means the
             other half holds the culprit (one culprit assumed), so n functions take ceil(log2 n)
             runs, and one more when the last function kept was inferred, not seen failing.
             When no single function fails alone (the failure needs two functions, or more),
             dd (delta debugging: each half tested with the other half kept, the complement)
             finds the interacting set in O(k log n) runs, and ddmin makes it 1-minimal (or
             searches the whole set when dd's answer does not fail: a failure not monotone).
    stages   the culprit alone, with PIJIT_DEBUG_NO_CACHE=1 (guards never trusted),
             PIJIT_DEBUG_NO_DIRECT=1 (cache hits run the rewritten code), PIJIT_PASSES=none (no optimisation passes), PIJIT_DEBUG_EAGER_GRAPH=1 (graphs run as
             eager ops): the first switch that makes the failure go away names the stage.

A run fails when it exits non-zero (or times out: --timeout); with --check CMD when the shell
command CMD, run after the program, exits non-zero (it sees PIJIT_BISECT_EXIT, the program's exit
status, and PIJIT_BISECT_STDOUT / PIJIT_BISECT_STDERR, files holding its output); with --output
when its exit status or stdout differs from the capture-off run's.

What run 1 captured comes from PIJIT_DUMP_DIR's run.json ("function" kinds only; resume functions
and loop bodies follow their function) or, where that is not written, from the PIJIT_CAPTURED_LIST
file (one `module:qualname` a line, an optional tab and kind after it); --functions gives the list
by hand (a run that crashes writes neither). Everything bisect ran keeps its output under --out.
Exit status: 0 when it names the culprit or there is nothing to bisect, 1 when the failure is not
pijit's or does not come back under the filter, 2 without a command.

The search itself (halve, dd, ddmin, find_culprits) takes any `fails(subset) -> bool`, so the tests
prove its run counts with a fake runner.
"""
import argparse
import ast
import collections
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

NOTHING = "-:-"  # a PIJIT_ONLY pattern that matches no code object: capture off

# The runtime's stage switches, in the order their verdicts take precedence.
STAGES = (
    ("PIJIT_DEBUG_NO_CACHE", "1", "guards never trusted",
     "the guards or the cache's reuse of a capture: the failure goes away when every call captures afresh"),
    ("PIJIT_DEBUG_NO_DIRECT", "1", "cache hits run the rewritten code",
     "the direct call (a cache hit calling the graph without its rewritten code): the failure goes away "
     "when every hit runs the rewritten bytecode"),
    ("PIJIT_PASSES", "none", "no optimisation passes",
     "a compiler pass or a fused kernel: the failure goes away when graphs are compiled without passes"),
    ("PIJIT_DEBUG_EAGER_GRAPH", "1", "graphs run as eager ops",
     "the graph compiler or its kernels: the failure goes away when graphs run node by node as eager ops"),
)
CAPTURE_AT_FAULT = ("the capture itself (the rewritten bytecode or the simulation): the failure stays with "
                    "every stage switch")

# A captured function: `name` is module:qualname; `file`/`line` (of the def) when run.json gave them;
# `pattern` is what PIJIT_ONLY names it by.
Func = collections.namedtuple("Func", "name file line pattern")


# ---------------------------------------------------------------------------------------------
# The search: pure functions of a `fails(subset) -> bool` oracle.

class Oracle:
    """Memoises `test(subset) -> bool` (True: the subset fails) by the subset's members, and
    counts the runs it really made; ddmin asks again for sets halving already ran."""

    def __init__(self, test):
        self.test = test
        self.seen = {}
        self.runs = 0

    def fails(self, subset):
        key = frozenset(subset)
        if key not in self.seen:
            self.runs += 1
            self.seen[key] = bool(self.test(list(subset)))
        return self.seen[key]


def split(items, n):
    """`items` in n contiguous chunks, the larger ones first (n=2: the first half is ceil(len/2))."""
    bounds = [(i * len(items) + n - 1) // n for i in range(n + 1)]
    return [items[bounds[i]:bounds[i + 1]] for i in range(n) if bounds[i] < bounds[i + 1]]


def halve(items, fails):
    """One culprit assumed: run the first half; keep it when it fails, else keep the second half
    without running it. Returns (culprit or None, the smallest set seen failing); None when the
    function left does not fail alone (the failure needs several functions, or is flaky).
    `items` itself is taken as failing (the caller's run 1 saw it fail)."""
    cur, smallest, seen_failing = list(items), list(items), False
    while len(cur) > 1:
        first = split(cur, 2)[0]
        if fails(first):
            cur, smallest, seen_failing = first, first, True
        else:
            cur, seen_failing = cur[len(first):], False
    if cur and (seen_failing or fails(cur)):
        return cur[0], cur
    return None, smallest


def ddmin(items, fails):
    """Zeller's ddmin: a 1-minimal failing subset of `items` (taken as failing): removing any one
    of its members makes it pass. Tries each of n chunks, then each chunk's complement, and
    doubles n when neither fails."""
    items, n = list(items), 2
    while len(items) >= 2:
        chunks = split(items, n)
        kept = next((c for c in chunks if fails(c)), None)
        if kept is not None:
            items, n = kept, 2
            continue
        comps = ([x for j, c in enumerate(chunks) if j != i for x in c] for i in range(len(chunks)))
        kept = next((c for c in comps if len(chunks) > 2 and fails(c)), None)
        if kept is not None:
            items, n = kept, max(n - 1, 2)
            continue
        if n >= len(items):
            break
        n = min(2 * n, len(items))
    return items


def dd(items, fails, rest=()):
    """Zeller's dd for interacting items: the members of `items` that, with all of `rest`, make the
    run fail ((items + rest) taken as failing). A half that fails with `rest` holds them all; when
    neither does, each half holds some, found with the other half added to `rest`. k culprits take
    O(k log n) runs, two per level."""
    items, rest = list(items), list(rest)
    if len(items) <= 1:
        return items
    first, second = split(items, 2)
    if fails(first + rest):
        return dd(first, fails, rest)
    if fails(second + rest):
        return dd(second, fails, rest)
    return dd(first, fails, second + rest) + dd(second, fails, first + rest)


def find_culprits(items, test, say=lambda line: None):
    """The smallest set of `items` that fails: halving first (one culprit); when no single item
    fails alone, dd over the smallest set seen failing, and ddmin when dd's answer does not fail
    (the failure is not monotone in the set). Returns (culprits, or None when the filtered runs
    never fail, oracle)."""
    oracle = Oracle(test)
    one, smallest = halve(items, oracle.fails)
    if one is not None:
        return [one], oracle
    if not oracle.fails(smallest):  # run 1 failed without the filter; with it, nothing does
        return None, oracle
    say("no single function fails alone: the failure needs several functions (or is flaky); "
        "bisecting for interacting functions (dd, complement testing) over %d functions" % len(smallest))
    found = dd(smallest, oracle.fails)
    if found and oracle.fails(found):
        return ddmin(found, oracle.fails), oracle  # 1-minimal: at most one run per member
    say("dd's answer does not fail alone: falling back to ddmin over %d functions" % len(smallest))
    found = ddmin(smallest, oracle.fails)
    if not oracle.fails(found):
        return None, oracle
    return found, oracle


# ---------------------------------------------------------------------------------------------
# What the failing run captured.

def with_patterns(funcs):
    """Gives each function its PIJIT_ONLY pattern: module:qualname, whose name part the runtime
    matches against the code object's name (all a 3.7/3.9 code object knows); functions that
    share a module and a last name part get their file:line instead, when known."""
    def key(f):
        module, _, qualname = f.name.partition(":")
        return module, qualname.rsplit(".", 1)[-1]
    shared = collections.Counter(key(f) for f in funcs)
    precise = lambda f: f.file and f.line and "," not in f.file and (shared[key(f)] > 1 or not key(f)[0])
    return [f._replace(pattern="%s:%d" % (f.file, f.line) if precise(f) else f.name) for f in funcs]


_QUALNAMES = {}  # source file -> {line: qualname}


def source_qualnames(path):
    """{line: qualname} for the functions of a source file, by the line of the def and of its first
    decorator (a 3.7/3.9 code object's co_firstlineno); {} when it cannot be parsed."""
    cache = _QUALNAMES
    if path not in cache:
        cache[path] = {}
        try:
            with open(path, "rb") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            return cache[path]

        def walk(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualname = prefix + child.name
                    if not isinstance(child, ast.ClassDef):
                        for line in [child.lineno] + [d.lineno for d in child.decorator_list[:1]]:
                            cache[path].setdefault(line, qualname)
                    walk(child, qualname + (".<locals>." if not isinstance(child, ast.ClassDef) else "."))
                else:
                    walk(child, prefix)
        walk(tree, "")
    return cache[path]


def read_run_json(path):
    """The "function" kinds of a dump's run.json (spec: the dump format), in source order, or None.
    Where the run knew only the code's name (3.7/3.9), the qualname comes from the source."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    funcs = []
    for e in data.get("functions", []):
        if e.get("kind", "function") != "function":
            continue
        module = e.get("module") or ""
        qualname = e.get("qualname") or e.get("function") or "?"
        if "." not in qualname and e.get("file") and e.get("line"):
            found = source_qualnames(e["file"]).get(e["line"], "")
            if found.rsplit(".", 1)[-1] == qualname:
                qualname = found
        funcs.append(Func("%s:%s" % (module, qualname), e.get("file"), e.get("line"), None))
    funcs.sort(key=lambda f: (f.file or "", f.line or 0, f.name))
    return funcs


def read_captured_list(path):
    """PIJIT_CAPTURED_LIST's file: `module:qualname` a line, optionally a tab and a kind, or None."""
    try:
        with open(path) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    funcs = []
    for line in lines:
        name, _, kind = line.strip().partition("\t")
        if name and kind.strip() in ("", "function"):
            funcs.append(Func(name, None, None, None))
    return funcs


def captured_functions(dump_dir, list_path):
    """(functions, where from): run.json when the run wrote one, else the list file; deduplicated
    in first-captured order. (None, None) when neither was written."""
    funcs, source = read_run_json(os.path.join(dump_dir, "run.json")), "run.json"
    if funcs is None:
        funcs, source = read_captured_list(list_path), "PIJIT_CAPTURED_LIST"
    if funcs is None:
        return None, None
    seen, unique = set(), []
    for f in funcs:
        if (f.name, f.file, f.line) not in seen:
            seen.add((f.name, f.file, f.line))
            unique.append(f)
    return with_patterns(unique), source


def describe(funcs):
    names = [f.name for f in funcs]
    if len(names) <= 3:
        return ", ".join(names)
    return "%s .. %s" % (names[0], names[-1])


# ---------------------------------------------------------------------------------------------
# Running the command.

RunResult = collections.namedtuple("RunResult", "number rc timed_out stdout stderr_tail out_path err_path")


class Runner:
    """Runs the command (and --check) with environment changes, numbers the runs and keeps each
    one's output in out/runs/N.stdout and N.stderr."""

    def __init__(self, command, out_dir, timeout=None, check=None):
        self.command = command
        self.out_dir = out_dir
        self.timeout = timeout
        self.check = check
        self.number = 0
        self.base_env = dict(os.environ)
        for name in ("PIJIT_DUMP_DIR", "PIJIT_CAPTURED_LIST"):  # bisect sets these where it wants them
            self.base_env.pop(name, None)
        os.makedirs(os.path.join(out_dir, "runs"), exist_ok=True)

    def _spawn(self, argv, env, out, err, shell=False):
        """Exit status, or None when it ran past the timeout (its whole process group is killed)."""
        with open(out, "wb") as o, open(err, "wb") as e:
            try:
                proc = subprocess.Popen(argv, stdout=o, stderr=e, env=env, shell=shell,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as ex:  # no such program: as a shell says it
                e.write(("pijit bisect: cannot run %s: %s\n" % (argv[0], ex)).encode())
                return 127
            try:
                return proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    proc.kill()
                proc.wait()
                return None

    def run(self, env_changes):
        """Runs the command once; env_changes maps names to values (None: unset)."""
        self.number += 1
        env = dict(self.base_env)
        for k, v in env_changes.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        base = os.path.join(self.out_dir, "runs", str(self.number))
        out, err = base + ".stdout", base + ".stderr"
        rc = self._spawn(self.command, env, out, err)
        with open(out, "rb") as fh:
            stdout = fh.read()
        with open(err, "rb") as fh:
            tail = fh.read().decode("utf-8", "replace").strip().splitlines()[-1:]
        return RunResult(self.number, rc, rc is None, stdout, tail[0] if tail else "", out, err)

    def check_fails(self, r):
        """--check's verdict on run r: its exit status, non-zero is a failure."""
        env = dict(self.base_env, PIJIT_BISECT_EXIT=str(r.rc if r.rc is not None else -1),
                   PIJIT_BISECT_STDOUT=r.out_path, PIJIT_BISECT_STDERR=r.err_path)
        base = os.path.join(self.out_dir, "runs", "%d.check" % r.number)
        rc = self._spawn(self.check, env, base + ".stdout", base + ".stderr", shell=True)
        return rc != 0


class Judge:
    """Whether a run failed: exit status (default), --check, or --output against a reference."""

    def __init__(self, runner, output=False):
        self.runner = runner
        self.output = output
        self.reference = None  # the capture-off run, for --output

    def fails(self, r, against_reference=True):
        """(failed, why)."""
        if r.timed_out:
            return True, "timed out after %gs" % self.runner.timeout
        if self.runner.check:
            failed = self.runner.check_fails(r)
            return failed, "--check %s (exit %d)" % ("fails" if failed else "passes", r.rc)
        if self.output and against_reference and self.reference is not None:
            if r.rc != self.reference.rc:
                return True, "exit %d, capture off %d" % (r.rc, self.reference.rc)
            if r.stdout != self.reference.stdout:
                return True, "stdout differs from capture off's"
            return False, "same exit status and stdout as capture off"
        why = "exit %d" % r.rc
        if r.rc < 0:
            try:
                why = "killed by %s" % signal.Signals(-r.rc).name
            except ValueError:
                why = "killed by signal %d" % -r.rc
        if r.rc != 0 and r.stderr_tail:
            why += ": " + r.stderr_tail[:160]
        return r.rc != 0, why


def verdict(failed):
    return "fails" if failed else "passes"


def only(funcs):
    return ",".join(f.pattern for f in funcs) or NOTHING


def stage_verdict(persists):
    """persists: {switch name: whether the failure stayed with it}, in STAGES order."""
    for name, _, _, blame in STAGES:
        if not persists.get(name, True):
            return blame
    return CAPTURE_AT_FAULT


# ---------------------------------------------------------------------------------------------
# The command.

def add_parser(subparsers):
    p = subparsers.add_parser(
        "bisect", help="find the captured function that makes a command fail under pijit",
        description="Reruns a command that fails under pijit (and passes with capture off) with PIJIT_ONLY "
                    "naming halves of what it captured, down to the culprit function; then says which stage "
                    "(guards, passes, graph, capture) is at fault and where the culprit's dump is.")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--check", metavar="CMD", default=None,
                     help="shell command run after each run: its exit status decides (non-zero: the run fails); "
                          "it sees PIJIT_BISECT_EXIT, PIJIT_BISECT_STDOUT and PIJIT_BISECT_STDERR")
    how.add_argument("--output", action="store_true",
                     help="a run fails when its exit status or stdout differs from the capture-off run's")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="per run; a run that takes longer is killed and counts as failing")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where runs' output and the dumps go (default: a new temporary folder); a previous "
                        "bisect's results there are replaced")
    p.add_argument("--functions", default=None, metavar="PATTERNS",
                   help="bisect over these comma-separated module:qualname patterns instead of what run 1 "
                        "captured (for a run that crashes before it can say)")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="the command; a first word ending in .py runs as `python -m pijit run script.py`")
    p.set_defaults(func=run_command)
    return p


def _command(words):
    if words and words[0] == "--":
        words = words[1:]
    if words and words[0].endswith(".py") and os.path.isfile(words[0]):
        return [sys.executable, "-m", "pijit", "run"] + words
    return words


def run_command(args):
    say = lambda line: print(line, flush=True)
    command = _command(list(args.command))
    if not command:
        print("pijit bisect: no command given (python -m pijit bisect -- command args...)", file=sys.stderr)
        return 2
    out_dir = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="pijit-bisect-")
    os.makedirs(out_dir, exist_ok=True)
    for old in ("runs", "run1", "run1.captured", "culprit"):  # a previous bisect's, in a reused --out
        path = os.path.join(out_dir, old)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.unlink(path)
    runner = Runner(command, out_dir, timeout=args.timeout, check=args.check)
    if command[:4] == [sys.executable, "-m", "pijit", "run"]:  # the child imports this pijit
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = runner.base_env.get("PYTHONPATH", "")
        runner.base_env["PYTHONPATH"] = here + (os.pathsep + path if path else "")
    judge = Judge(runner, output=args.output)
    say("pijit bisect: %s (runs' output in %s)" % (" ".join(command), out_dir))

    # Run 1: as given, leaving the list of what it captured.
    dump1, list1 = os.path.join(out_dir, "run1"), os.path.join(out_dir, "run1.captured")
    first = runner.run({"PIJIT_DUMP_DIR": dump1, "PIJIT_CAPTURED_LIST": list1})
    if args.output:
        say("run %d: as given -> exit %s (stdout kept to compare)" % (first.number, "timeout" if first.timed_out
                                                                       else first.rc))
        first_failed = None
    else:
        first_failed, why = judge.fails(first)
        say("run %d: as given -> %s (%s)" % (first.number, verdict(first_failed), why))
        if not first_failed:
            say("nothing to bisect: the command passes under pijit")
            return 0

    # Run 2: capture off.
    off = runner.run({"PIJIT_ONLY": NOTHING})
    off_failed, why = judge.fails(off, against_reference=False)
    say("run %d: capture off (PIJIT_ONLY=%s) -> %s (%s)" % (off.number, NOTHING, verdict(off_failed), why))
    if off_failed:
        say("fails without pijit too: not a pijit bug")
        return 1
    judge.reference = off
    if args.output:
        first_failed, why = judge.fails(first)
        say("run %d vs run %d: %s -> %s" % (first.number, off.number, why, verdict(first_failed)))
        if not first_failed:
            say("nothing to bisect: the command's output under pijit is the same as with capture off")
            return 0

    if args.functions:
        funcs = with_patterns([Func(p.strip(), None, None, None) for p in args.functions.split(",") if p.strip()])
        source = "--functions"
    else:
        funcs, source = captured_functions(dump1, list1)
    if funcs is None:
        say("run 1 left no list of what it captured (neither %s nor %s): this pijit writes neither, the "
            "command does not run pijit, or it crashed before exit; name the candidates with --functions"
            % (os.path.join(dump1, "run.json"), list1))
        return 1
    if not funcs:
        say("run 1 captured no function (%s), yet only capture off passes: nothing to bisect over" % source)
        return 1
    say("%d functions captured (from %s)" % (len(funcs), source))

    def test(subset):
        r = runner.run({"PIJIT_ONLY": only(subset)})
        failed, why = judge.fails(r)
        say("run %d: %d function%s captured (%s) -> %s%s" % (
            r.number, len(subset), "" if len(subset) == 1 else "s", describe(subset), verdict(failed),
            "" if why.startswith("exit 0") or why.startswith("same") else " (%s)" % why))
        return failed

    culprits, oracle = find_culprits(funcs, test, say)
    if culprits is None:
        say("the failure does not come back with PIJIT_ONLY naming the functions run 1 captured: it is flaky, "
            "or it comes from something the per-function filter does not reach")
        return 1
    names = ", ".join(c.name for c in culprits)
    where = ", ".join("%s:%s" % (c.file, c.line) for c in culprits if c.file and c.line)
    say("isolated %s%s in %d run%s of the bisection (%d functions, log2 = %.1f)"
        % (names, " (%s)" % where if where else "", oracle.runs, "" if oracle.runs == 1 else "s", len(funcs),
           math.log2(len(funcs))))

    # Which stage: the culprit alone, each switch in turn.
    persists = {}
    for name, value, what, _ in STAGES:
        r = runner.run({"PIJIT_ONLY": only(culprits), name: value})
        failed, why = judge.fails(r)
        persists[name] = failed
        say("run %d: %s with %s=%s (%s) -> %s" % (r.number, names, name, value, what, verdict(failed)))
    say("stage: " + stage_verdict(persists))

    # The culprit's dump.
    dump = os.path.join(out_dir, "culprit")
    r = runner.run({"PIJIT_ONLY": only(culprits), "PIJIT_DUMP_DIR": dump})
    say("run %d: %s with PIJIT_DUMP_DIR=%s -> %s" % (r.number, names, dump, verdict(judge.fails(r)[0])))
    say("dump: " + dump_folders(dump))
    say("%s: %s" % ("culprit" if len(culprits) == 1 else "culprits", names))
    return 0


def dump_folders(dump):
    """The folders of a dump made with PIJIT_ONLY naming the culprits (theirs, and their resume
    functions' and loop bodies'), or the dump itself."""
    try:
        with open(os.path.join(dump, "run.json")) as fh:
            entries = json.load(fh).get("functions", [])
    except (OSError, ValueError):
        return "%s (it holds no run.json)" % dump
    keys = [os.path.join(dump, e["key"]) for e in entries if e.get("key")]
    return ", ".join(sorted(keys)) if keys else dump
