"""pijit's coverage of MindSpore's public API, name by name: renders docs/mindspore_api.md and
tools/mindspore_api/status.json from tools/mindspore_api/names.txt (MindSpore's names) and
tools/mindspore_api/ignored.txt (names with no meaning off Ascend, each with its reason).

    PYTHONPATH=pyscripts python tools/mindspore_api/gen_api_table.py            # print the summary
    PYTHONPATH=pyscripts python tools/mindspore_api/gen_api_table.py --write    # rewrite docs + status
    PYTHONPATH=pyscripts python tools/mindspore_api/gen_api_table.py --check    # exit 1 when stale

Each name is looked up through pijit's `mindspore` alias, as a user's `from mindspore.X import name`
would. A name is
  implemented  when the attribute exists and is not a placeholder,
  ignored      when ignored.txt names it (and pijit does not implement it),
  missing      otherwise: absent, the module does not import, or a placeholder. A placeholder is a
               function whose body only raises NotImplementedError, an object marked
               `__pijit_placeholder__ = True`, or a Primitive subclass that keeps the base class's
               __call__ (which raises NotImplementedError).

An implemented name is *named by a test* when it appears as an identifier (or in a string) in some
file under tests/. tools/mindspore_api/untested.txt lists the implemented names no test names; it
is generated and checked like the table, so a name that gains an implementation without a test
shows up there in review, and the list only shrinks as tests arrive.
"""
import argparse
import ast
import importlib
import inspect
import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAMES = os.path.join(HERE, "names.txt")
IGNORED = os.path.join(HERE, "ignored.txt")
STATUS = os.path.join(HERE, "status.json")
DOC = os.path.join(ROOT, "docs", "mindspore_api.md")
UNTESTED = os.path.join(HERE, "untested.txt")
TESTS = os.path.join(ROOT, "tests")
REGENERATE = "PYTHONPATH=pyscripts python tools/mindspore_api/gen_api_table.py --write"

STATES = ("implemented", "ignored", "missing")


def _rows(path, width):
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != width:
                raise ValueError("%s: expected %d tab-separated fields, got %r" % (path, width, line))
            out.append(parts)
    return out


def load_names(path=NAMES):
    """{module: {name: kind}} in file order (the file is sorted)."""
    names = {}
    for module, name, kind in _rows(path, 3):
        names.setdefault(module, {})[name] = kind
    return names


def load_ignored(path=IGNORED):
    return {(m, n): reason for m, n, reason in _rows(path, 3)}


def _only_raises_not_implemented(fn):
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return False
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Str):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"


def is_placeholder(obj):
    if getattr(obj, "__pijit_placeholder__", False) is True:
        return True
    if inspect.isfunction(obj):
        return _only_raises_not_implemented(obj)
    if inspect.isclass(obj):
        try:
            from pijit.ops.primitives import Primitive
        except ImportError:  # pragma: no cover - pijit itself is broken
            return False
        if issubclass(obj, Primitive) and obj is not Primitive and obj.__call__ is Primitive.__call__:
            return True
    return False


def _import(module):
    """The module as `import module` gives it under pijit's alias (pijit's own module when a real
    MindSpore is installed and the alias stays off)."""
    from pijit import alias
    name = module if alias.install_mindspore_alias() else "pijit" + module[len("mindspore"):]
    return importlib.import_module(name)


def classify(names=None, ignored=None):
    """{module: {name: (state, detail)}}: detail is the ignore reason, or why a name is missing."""
    names = load_names() if names is None else names
    ignored = load_ignored() if ignored is None else ignored
    out = {}
    for module in sorted(names):
        try:
            mod, why = _import(module), None
        except Exception as e:  # any failure to import makes every name of it missing
            mod, why = None, "module does not import (%s: %s)" % (type(e).__name__, e)
        states = out[module] = {}
        for name in sorted(names[module]):
            if mod is not None and hasattr(mod, name):
                obj = getattr(mod, name)
                if not is_placeholder(obj):
                    states[name] = ("implemented", "")
                    continue
                detail = "placeholder (raises NotImplementedError)"
            else:
                detail = why or "not defined"
            if (module, name) in ignored:
                states[name] = ("ignored", ignored[(module, name)])
            else:
                states[name] = ("missing", detail)
    return out


def tested_words(root=TESTS):
    """Every identifier-like word of the test sources (code, strings and comments alike)."""
    import re
    words = set()
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f), errors="replace") as fh:
                    words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fh.read()))
    return words


def untested(table, words=None):
    """[(module, name)] implemented but named by no test."""
    words = tested_words() if words is None else words
    return [(m, n) for m, states in sorted(table.items()) for n, (st, _) in sorted(states.items())
            if st == "implemented" and n not in words]


def render_untested(table, words=None):
    rows = untested(table, words)
    return ("# Implemented MindSpore names that no file under tests/ names (generated by\n"
            "# tools/mindspore_api/gen_api_table.py --write; shrink it by testing them).\n"
            + "".join("%s\t%s\n" % r for r in rows))


def status_dict(table):
    return {m: {s: sorted(n for n, (st, _) in names.items() if st == s) for s in STATES}
            for m, names in sorted(table.items())}


def render_status(table):
    return json.dumps(status_dict(table), indent=1, sort_keys=True) + "\n"


def render_markdown(table, names=None, words=None):
    names = load_names() if names is None else names
    missing_tests = set(untested(table, words))
    lines = ["# MindSpore API coverage", "",
             "Generated by `tools/mindspore_api/gen_api_table.py` from `tools/mindspore_api/names.txt`",
             "(MindSpore's public names; its header says which release and files they come from) and",
             "`tools/mindspore_api/ignored.txt`. Do not edit by hand: run `%s`." % REGENERATE, "",
             "A name is *implemented* when `from mindspore.<module> import <name>` gives a pijit object that is",
             "not a placeholder, *ignored* when it has no meaning off Ascend (reason given), *missing* otherwise.",
             "*Named by a test* counts the implemented names some file under `tests/` names.",
             "", "## Summary", "",
             "| module | implemented | ignored | missing | total | implemented or ignored | named by a test |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    tot = dict.fromkeys(STATES, 0)
    tot_tested = 0
    for module, states in sorted(table.items()):
        c = {s: sum(1 for st, _ in states.values() if st == s) for s in STATES}
        n = len(states)
        tested = c["implemented"] - sum(1 for m, _ in missing_tests if m == module)
        tot_tested += tested
        for s in STATES:
            tot[s] += c[s]
        lines.append("| `%s` | %d | %d | %d | %d | %s | %d |" % (
            module, c["implemented"], c["ignored"], c["missing"], n, _pct(c["implemented"] + c["ignored"], n),
            tested))
    n = sum(tot.values())
    lines.append("| **all** | %d | %d | %d | %d | %s | %d |" % (
        tot["implemented"], tot["ignored"], tot["missing"], n, _pct(tot["implemented"] + tot["ignored"], n),
        tot_tested))
    for module, states in sorted(table.items()):
        lines += ["", "## `%s`" % module]
        for s in STATES:
            rows = [(name, detail) for name, (st, detail) in sorted(states.items()) if st == s]
            lines += ["", "### %s (%d)" % (s, len(rows)), ""]
            if not rows:
                lines.append("(none)")
            elif s == "ignored":
                lines += ["- `%s` (%s): %s" % (name, names[module][name], d) for name, d in rows]
            else:
                lines.append(", ".join("`%s`" % name for name, _ in rows))
        bare = sorted(n for m, n in missing_tests if m == module)
        if bare:
            lines += ["", "### implemented, named by no test (%d)" % len(bare), "",
                      ", ".join("`%s`" % name for name in bare)]
    return "\n".join(lines) + "\n"


def _pct(k, n):
    return "%.1f%%" % (100.0 * k / n) if n else "-"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except IOError:
        return None


def _outputs(table):
    words = tested_words()
    return ((DOC, render_markdown(table, words=words)), (STATUS, render_status(table)),
            (UNTESTED, render_untested(table, words)))


def stale(table=None):
    """[(path, committed text or None, generated text)] for each output that differs."""
    table = classify() if table is None else table
    out = []
    for path, text in _outputs(table):
        old = _read(path)
        if old != text:
            out.append((path, old, text))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite docs/mindspore_api.md and status.json")
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed files are stale")
    args = ap.parse_args(argv)
    table = classify()
    if args.write:
        for path, text in _outputs(table):
            with open(path, "w") as f:
                f.write(text)
            print("wrote %s" % os.path.relpath(path, ROOT))
    for line in render_markdown(table).splitlines():
        if line.startswith("| "):
            print(line)
    if args.check:
        bad = stale(table)
        for path, _, _ in bad:
            print("stale: %s (run %s)" % (os.path.relpath(path, ROOT), REGENERATE))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "pyscripts"))
    sys.exit(main())
