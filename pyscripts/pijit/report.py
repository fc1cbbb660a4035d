"""pijit.report: one self-contained HTML page that shows a whole run (issue 15).

    PIJIT_DUMP_DIR=DIR python -m pijit run script.py     # pijit writes DIR at exit (docs: dump format)
    python -m pijit report DIR -o report.html            # this module turns DIR into one page

The page reads DIR/run.json, each function's folder DIR/<key>/, the user's source files as they are on
disk now (a file gone since the run is reported as missing) and DIR/trace.json when present. It is
one file with its CSS and JS inline and a Content-Security-Policy that forbids any fetch, so it opens
anywhere without a network. Everything taken from the run is HTML-escaped; graphviz's SVG is embedded
after its XML prolog is cut off, and shown as the .dot text instead if it holds anything scriptable.
Stable ids and classes for tests: #summary, details.function#fn-<key>, .break-reason, .guards, .graph,
.line.captured|broken|interpreted|outside with data-line.
"""
import html
import io
import json
import os
import re
import sys
import tokenize

FORMAT = 1
TEXT_CAP = 256 * 1024          # bytes of one dump text file (IR, bytecode, dot) shown on the page
SVG_CAP = 4 * 1024 * 1024      # bytes of one inline graph; a larger one is named, not embedded
TRACE_CAP = 32 * 1024 * 1024   # trace.json larger than this is not parsed at all (json.load holds it all)
TOP_KERNELS = 10


class ReportError(Exception):
    """DIR or its run.json is missing or unreadable: the command prints it and exits with 2."""


def esc(s):
    return html.escape("" if s is None else str(s), quote=True)


def _ms(v):
    return "%.1f ms" % (v or 0.0)


def _read_text(path, cap=TEXT_CAP):
    try:
        with io.open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(cap + 1)
    except OSError as e:
        return "(cannot read %s: %s)" % (path, e)
    if len(text) > cap:
        text = text[:cap] + "\n... (cut at %d characters of %d bytes)" % (cap, os.path.getsize(path))
    return text


def _load_run(dump_dir):
    if not os.path.isdir(dump_dir):
        raise ReportError("no such directory: %s" % dump_dir)
    path = os.path.join(dump_dir, "run.json")
    if not os.path.isfile(path):
        raise ReportError("%s has no run.json (run the script with PIJIT_DUMP_DIR=%s)" % (dump_dir, dump_dir))
    try:
        with io.open(path, encoding="utf-8") as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("cannot read %s: %s" % (path, e))
    if not isinstance(run, dict) or not isinstance(run.get("functions", []), list):
        raise ReportError("%s is not a pijit run.json (no list of functions)" % path)
    if run.get("format") != FORMAT:
        raise ReportError("%s has format %r; this report reads format %d" % (path, run.get("format"), FORMAT))
    run["functions"] = [f for f in run.get("functions") or [] if isinstance(f, dict) and f.get("key")]
    return run


def _is_pijit_file(path, fns):
    """pijit's own package, known by the module name capture recorded (a path test would also catch a
    user's checkout that happens to be called pijit); the path decides only when no module is known."""
    mods = [f.get("module") for f in fns if f.get("module")]
    if mods:
        return any(m == "pijit" or m.startswith("pijit.") for m in mods)
    return "/pijit/" in path.replace("\\", "/")


# ---- source files ------------------------------------------------------------------------------

def _source_lines(path):
    """The file's lines as Python numbers them (only \\n, \\r\\n and \\r end a line), or None if gone."""
    try:
        try:
            with tokenize.open(path) as f:  # honours a coding cookie
                text = f.read()
        except (SyntaxError, UnicodeDecodeError):
            with io.open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError:
        return None
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _shown(path):
    """A path as pijit's break texts name it: a lone surrogate (a file name byte that is not UTF-8)
    as \udcff."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _line_kinds(fns, path):
    """line -> (class, [break texts]); a break wins over a graph, a graph over the interpreter."""
    kinds, reasons = {}, {}
    for f in fns:
        first, last = f.get("line") or 0, f.get("last_line") or f.get("line") or 0
        for n in range(first, last + 1):
            kinds.setdefault(n, "interpreted")
        for n in f.get("graph_lines") or []:
            if kinds.get(n) != "broken":
                kinds[n] = "captured"
        for n in f.get("break_lines") or []:
            kinds[n] = "broken"
        refusals = []
        for b in f.get("breaks") or []:
            if not isinstance(b, dict):
                continue
            if b.get("line") is None:
                refusals.append(b.get("text") or b.get("message") or "")
            elif b.get("file") is None or os.path.normpath(b["file"]) in (path, _shown(path)):
                reasons.setdefault(b["line"], []).append(b.get("text") or b.get("message") or "")
        for n in f.get("break_lines") or []:  # a break line with no located reason: a run-time refusal
            if n not in reasons:
                reasons[n] = refusals or ["graph break in %s (no reason recorded)" % f.get("function")]
    return kinds, {n: list(dict.fromkeys(r)) for n, r in reasons.items()}


def _name(f):
    kind = f.get("kind") or "function"
    return (f.get("qualname") or f.get("function") or "?") + ("" if kind == "function" else " (%s)" % kind)


def _file_section(path, fns, pijit_own, index):
    lines = _source_lines(path)
    links = ", ".join('<a href="#fn-%s">%s</a>' % (esc(f["key"]), esc(_name(f))) for f in fns) or "nothing captured"
    out = ['<details class="file%s" id="file-%d"%s><summary><code>%s</code> (%s)</summary>'
           % (" pijit" if pijit_own else "", index, "" if pijit_own else " open", esc(path), links)]
    if lines is None:
        out.append('<p class="missing">source file missing: %s (moved or deleted since the run)</p></details>'
                   % esc(path))
        return "".join(out)
    kinds, reasons = _line_kinds(fns, path)
    out.append('<div class="src">')
    for n, text in enumerate(lines, 1):
        kind = kinds.get(n, "outside")
        why = reasons.get(n) if kind == "broken" else None
        title = ' title="%s"' % esc("\n".join(why)) if why else ""
        tail = "".join('<span class="break-reason">%s</span>' % esc(r) for r in why or [])
        out.append('<div class="line %s" data-line="%d"%s><span class="ln">%d</span><code>%s</code>%s</div>'
                   % (kind, n, title, n, esc(text), tail))
    out.append("</div></details>")
    return "\n".join(out)


# ---- one function ------------------------------------------------------------------------------

_ENTRY_FILE = re.compile(r"^entry(\d+)\.(.+)$")
_IR = re.compile(r"^graph\.(\d+)\.(.+)\.ir$")


def _dump_files(dump_dir, key):
    """entry index -> {name after 'entryN.': path}, and the folder's other files."""
    folder = os.path.join(dump_dir, key)
    if os.path.basename(key) != key or not os.path.isdir(folder):
        return {}, []
    entries, others = {}, []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        m = _ENTRY_FILE.match(name)
        if m:
            entries.setdefault(int(m.group(1)), {})[m.group(2)] = path
        else:
            others.append(path)
    return entries, others


def _svg(path):
    text = _read_text(path, SVG_CAP)
    if len(text) > SVG_CAP:  # cut: a partial SVG would not render
        return None
    start = text.find("<svg")
    low = text.lower()
    if start < 0 or "<script" in low or "<foreignobject" in low or re.search(r"\son\w+\s*=", low):
        return None
    return text[start:]


def _pre(path, cls):
    return '<pre class="%s">%s</pre>' % (cls, esc(_read_text(path)))


def _list(cls, items, item_cls=None):
    """<ul class=cls> of the escaped items, or "none"."""
    li = '<li class="%s">' % item_cls if item_cls else "<li>"
    return '<ul class="%s">%s</ul>' % (cls, "".join(li + esc(x) + "</li>" for x in items)) if items else "<p>none</p>"


def _collapsed(title, body, cls=""):
    return '<details class="%s"><summary>%s</summary>%s</details>' % (cls, esc(title), body)


def _entry_of(f, i):
    """The run.json entry whose files are entry<i>.*: by its serial (the compile that made it;
    entries are listed in compile order, an evicted one missing), else the i-th."""
    entries = [e for e in (f.get("entries") or []) if isinstance(e, dict)]
    if any("serial" in e for e in entries):
        return next((e for e in entries if e.get("serial") == i), {})
    return entries[i] if i < len(entries) else {}


def _entry_section(f, i, files):
    e = _entry_of(f, i)
    guards = e.get("guards")
    if guards is None:
        per_entry = f.get("guards") or []
        guards = per_entry[i] if i < len(per_entry) else []
    head = "cache entry %d" % i + (": %s hits, %s ops" % (e.get("hits"), e.get("ops")) if e else "")
    out = ['<div class="entry" id="fn-%s-entry-%d"><h4>%s</h4>' % (esc(f["key"]), i, esc(head))]
    for label, field in (("compiled because", "reason"), ("graph break", "graph_break")):
        if e.get(field):
            out.append('<p>%s: <span class="%s">%s</span></p>' % (label, field.replace("_", "-"), esc(e[field])))
    out.append('<ul class="guards">%s</ul>' % ("".join("<li><code>%s</code></li>" % esc(g) for g in guards)
                                               or '<li class="none">no guards</li>'))  # visible even when empty
    if e.get("effects"):
        out.append("<p>side effects replayed:</p>" + _list("effects", e["effects"]))
    svg = _svg(files["graph.svg"]) if "graph.svg" in files else None
    if svg is not None:
        out.append('<div class="graph">%s</div>' % svg)
    elif "graph.dot" in files:
        out.append('<div class="graph">%s</div>' % _pre(files["graph.dot"], "dot"))
    irs = sorted((int(m.group(1)), m.group(2), name) for name, m in ((n, _IR.match(n)) for n in files) if m)
    if irs:  # graph.<stage>.<pass>.ir: the last stage is what the kernels were made from
        stage, pass_name, name = irs[-1]
        out.append('<details class="ir" open><summary>IR after the last pass (%d: %s)</summary>%s</details>'
                   % (stage, esc(pass_name), _pre(files[name], "ir")))
    if "rewritten.dis" in files:
        out.append(_collapsed("rewritten bytecode", _pre(files["rewritten.dis"], "bytecode"), "bytecode"))
    shown = {"graph.svg", "graph.dot", "rewritten.dis"} | {name for _, _, name in irs}
    for name in sorted(set(files) - shown):
        if not name.endswith(".svg"):
            out.append(_collapsed("entry%d.%s" % (i, name), _pre(files[name], "dump"), "dump"))
    out.append("</div>")
    return "\n".join(out)


def _function_section(dump_dir, f):
    key = f["key"]
    breaks = list(dict.fromkeys(b.get("text") or b.get("message") or "" for b in f.get("breaks") or []
                                if isinstance(b, dict)))  # each cache entry reports its break again
    recompiles = f.get("recompiles") or []
    head = "%s <span class=\"kind\">%s</span> <code>%s:%s</code> %d graphs, %d breaks, %d recompiles" % (
        esc(f.get("qualname") or f.get("function")), esc(f.get("kind", "function")),
        esc(os.path.basename(f.get("file") or "?")), esc(f.get("line")), f.get("graphs") or 0, len(breaks),
        len(recompiles))
    out = ['<details class="function" id="fn-%s"><summary>%s</summary>' % (esc(key), head)]
    stats = [("module", f.get("module")), ("file", "%s:%s-%s" % (f.get("file"), f.get("line"), f.get("last_line"))),
             ("compiles", f.get("compiles")), ("cache hits", f.get("cache_hits")),
             ("graph runs", f.get("graph_runs")), ("ops per graph", ", ".join(map(str, f.get("ops_per_graph") or []))),
             ("capturing", _ms(f.get("capture_ms"))), ("compiling", _ms(f.get("compile_ms"))),
             ("in graphs", _ms(f.get("run_ms")))]
    if f.get("skip_reason"):
        stats.append(("runs eagerly", f["skip_reason"]))
    out.append('<table class="stats">%s</table>' % "".join("<tr><th>%s</th><td>%s</td></tr>" % (esc(k), esc(v))
                                                          for k, v in stats))
    out.append("<h3>Breaks</h3>" + _list("breaks", breaks, "break-reason"))
    out.append("<h3>Recompiles</h3>" + _list("recompiles", recompiles))
    files, others = _dump_files(dump_dir, key)
    serials = [e["serial"] + 1 for e in (f.get("entries") or []) if isinstance(e, dict) and
               isinstance(e.get("serial"), int)]
    count = max([len(f.get("entries") or []), len(f.get("guards") or [])] + serials + [i + 1 for i in files])
    out.append("<h3>Cache entries</h3>" + ("".join(_entry_section(f, i, files.get(i, {})) for i in range(count))
                                          or "<p>none</p>"))
    for path in others:  # original.dis and whatever else the folder holds
        out.append(_collapsed(os.path.basename(path), _pre(path, "dump"), "dump"))
    out.append("</details>")
    return "\n".join(out)


# ---- the run as a whole ------------------------------------------------------------------------

def _summary(run, user_fns):
    t = run.get("totals") or {}
    rows = [("python", run.get("python")), ("pijit", run.get("pijit")),
            ("command", " ".join(run.get("argv") or [])), ("directory", run.get("cwd")),
            ("wall time", _ms(run.get("wall_ms"))),
            ("functions captured", t.get("functions", len(user_fns))), ("graphs", t.get("graphs")),
            ("graph runs", t.get("graph_runs")), ("breaks", t.get("breaks")), ("recompiles", t.get("recompiles")),
            ("time capturing", _ms(t.get("capture_ms"))), ("time compiling", _ms(t.get("compile_ms"))),
            ("time in graphs", _ms(t.get("graph_ms")))]
    return ('<section id="summary"><h2>Run</h2><table class="stats">%s</table></section>'
            % "".join("<tr><th>%s</th><td>%s</td></tr>" % (esc(k), esc(v)) for k, v in rows))


def _trace_section(dump_dir):
    path = os.path.join(dump_dir, "trace.json")
    if not os.path.isfile(path):
        return ""
    size = os.path.getsize(path)
    if size > TRACE_CAP:
        return ('<section id="trace"><h2>Timeline</h2><p>trace.json is %d MB, too large to summarise here; '
                'open it in chrome://tracing or Perfetto.</p></section>' % (size >> 20))
    try:
        with io.open(path, encoding="utf-8") as f:
            data = json.load(f)
        events = data.get("traceEvents", []) if isinstance(data, dict) else data
        dropped = (data.get("otherData") or {}).get("dropped_events") if isinstance(data, dict) else 0
        cats, kernels = {}, {}
        for ev in events:
            if not isinstance(ev, dict) or ev.get("ph") != "X":
                continue
            us = float(ev.get("dur") or 0)
            c = cats.setdefault(str(ev.get("cat", "?")), [0, 0.0])
            c[0] += 1
            c[1] += us
            if ev.get("cat") == "kernel":
                k = kernels.setdefault(str(ev.get("name", "?")), [0, 0.0])
                k[0] += 1
                k[1] += us
    except (OSError, ValueError, TypeError, AttributeError) as e:
        return '<section id="trace"><h2>Timeline</h2><p>trace.json could not be read: %s</p></section>' % esc(e)
    top = max([c[1] for c in cats.values()] or [1.0]) or 1.0
    rows = "".join('<tr><th>%s</th><td>%d</td><td>%s</td><td><div class="bar" style="width:%.0f%%"></div></td></tr>'
                   % (esc(name), n, _ms(us / 1000.0), 100.0 * us / top)
                   for name, (n, us) in sorted(cats.items(), key=lambda kv: -kv[1][1]))
    rows = rows or '<tr><td colspan="4">no timed events</td></tr>'
    if dropped:
        rows += '<tr><td colspan="4">%s events dropped by the tracer (its buffer was full)</td></tr>' % esc(dropped)
    krows = "".join("<tr><th><code>%s</code></th><td>%d</td><td>%s</td></tr>" % (esc(name), n, _ms(us / 1000.0))
                    for name, (n, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:TOP_KERNELS])
    return ('<section id="trace"><h2>Timeline</h2><p>Time per category (categories nest: kernels run inside '
            'graphs, so they do not add up to the wall time).</p><table class="trace-categories">'
            '<tr><th>category</th><th>events</th><th>time</th><th></th></tr>%s</table>'
            '<h3>Top kernels by time</h3><table class="trace-kernels"><tr><th>kernel</th><th>runs</th>'
            '<th>time</th></tr>%s</table></section>' % (rows, krows or '<tr><td colspan="3">none</td></tr>'))


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}
code,pre,.src{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
th{text-align:left;padding-right:1em;font-weight:600}
details{margin:.4em 0}details>summary{cursor:pointer}
details.function,details.file{border:1px solid #ccc;border-radius:4px;padding:.3em .6em}
.kind{color:#666;font-size:90%}
.src{overflow-x:auto;border-top:1px solid #ddd}
.line{padding:0 .4em;white-space:pre;tab-size:4}.ln{display:inline-block;width:4em;color:#888;user-select:none}
.line.captured,.legend .captured{background:#d4f4cc}.line.broken,.legend .broken{background:#f8cccc}
.line.interpreted,.legend .interpreted{background:#e6e6e6}
.line .break-reason{margin-left:2em;color:#a00;font-family:system-ui,sans-serif}
.legend span{padding:0 .6em;margin-right:.6em;border:1px solid #ccc}
.break-reason{color:#a00}.missing{color:#a00;font-weight:600}
.graph{overflow:auto;max-height:80vh;border:1px solid #eee;margin:.4em 0}.graph svg{max-width:100%;height:auto}
pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:60vh}
.bar{background:#69c;height:.8em;min-width:1px}table.trace-categories td:last-child{width:20em}
.entry{border-left:3px solid #9bd;padding-left:.6em;margin:.6em 0}
"""

# Opens the <details> a link points into (a function from a file's list): nothing else needs script.
_JS = """
(function(){
  function openTarget(){
    var el = null;
    try { el = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { return; }
    for (; el; el = el.parentElement) { if (el.tagName === "DETAILS") { el.open = true; } }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"""


def build_report(dump_dir):
    """The HTML page of the run dumped in dump_dir; ReportError if dump_dir or its run.json is unusable."""
    run = _load_run(dump_dir)
    cwd = run.get("cwd") or dump_dir
    by_file = {}
    for f in run["functions"]:
        if f.get("path") or f.get("file"):  # the file itself (run.json's "file" is its text, as breaks name it)
            f["file"] = os.path.normpath(os.path.join(cwd, f.get("path") or f["file"]))  # absolute already: join keeps it
            by_file.setdefault(f["file"], []).append(f)
    argv = run.get("argv") or []
    if argv and argv[0].endswith(".py"):  # the script itself, even when nothing in it was captured
        by_file.setdefault(os.path.normpath(os.path.join(cwd, argv[0])), [])
    files = sorted(by_file, key=lambda p: (_is_pijit_file(p, by_file[p]), p))
    for fns in by_file.values():
        fns.sort(key=lambda f: (f.get("line") or 0, f.get("key")))
    pijit_files = [p for p in files if _is_pijit_file(p, by_file[p])]
    user_files = [p for p in files if p not in pijit_files]
    user_fns = [f for p in user_files for f in by_file[p]]
    pijit_fns = [f for p in pijit_files for f in by_file[p]]
    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
             'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">',
             '<link rel="icon" href="data:,"><title>pijit report: %s</title>' % esc(" ".join(argv) or dump_dir),
             "<style>%s</style></head><body>" % _CSS,
             "<h1>pijit report</h1>", _summary(run, user_fns), _trace_section(dump_dir),
             '<section id="sources"><h2>Source</h2><p class="legend"><span class="captured">captured into a graph'
             '</span><span class="broken">graph break</span><span class="interpreted">run by the interpreter '
             'inside a captured function</span><span>not captured</span></p>']
    parts += [_file_section(p, by_file[p], False, i) for i, p in enumerate(user_files)]
    if pijit_files:
        parts.append("<h3>pijit's own files</h3>")
        parts += [_file_section(p, by_file[p], True, len(user_files) + i) for i, p in enumerate(pijit_files)]
    parts.append('</section><section id="functions"><h2>Functions</h2>')
    parts += [_function_section(dump_dir, f) for f in user_fns] or ["<p>nothing was captured</p>"]
    if pijit_fns:
        parts.append("<h3>in pijit's own files</h3>")
        parts += [_function_section(dump_dir, f) for f in pijit_fns]
    parts.append("</section><script>%s</script></body></html>\n" % _JS)
    return "\n".join(parts)


def write_report(dump_dir, out_path):
    page = build_report(dump_dir)
    with io.open(out_path, "w", encoding="utf-8", errors="backslashreplace") as f:  # (a path's lone surrogates)
        f.write(page)
    return out_path


def add_parser(subparsers):
    p = subparsers.add_parser("report", help="write one HTML page showing a run dumped with PIJIT_DUMP_DIR")
    p.add_argument("dir", help="the PIJIT_DUMP_DIR of the run")
    p.add_argument("-o", "--output", default="report.html", help="the page to write (default report.html)")
    return p


def run_command(args):
    try:
        write_report(args.dir, args.output)
    except ReportError as e:
        print("pijit report: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("pijit report: cannot write %s: %s" % (args.output, e), file=sys.stderr)
        return 1
    print("pijit report: wrote %s" % args.output)
    return 0
