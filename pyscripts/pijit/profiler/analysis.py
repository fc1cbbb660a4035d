"""What Profiler.analyse writes: the trace events of the profiled windows, summed per op type and
per op (type + input dtypes/shapes), as MindSpore's CPU profiler names its files.

Sources (common/trace.h): "op" spans, one per eager registry op call (pijit's C++ op dispatch,
while a Profiler runs), with their inputs, outputs, newly held bytes and nesting depth; "kernel"
spans, one per step of a captured graph's launch; and pijit's own capture/guards/graph spans,
which stay in the timeline but are not ops. An eager op called inside another eager op (depth >
0) is in the timeline but counted only through its caller, so the shares add up to 100%."""
import csv
import json
import os

# MindSpore's CPU profiler file names (device 0: pijit runs one device)
TYPE_CSV = "cpu_op_type_info_{}.csv"
DETAIL_CSV = "cpu_op_detail_info_{}.csv"
TIMELINE = "cpu_timeline_display_{}.json"
MEMORY_CSV = "cpu_op_memory_info_{}.csv"
MEMORY_SUMMARY = "memory_summary_{}.json"


class OpRecord(object):
    """One counted op call: its type, side ('eager' op or 'graph' kernel), signature, us, bytes."""
    __slots__ = ("op_type", "side", "inputs", "outputs", "dur", "bytes", "step")

    def __init__(self, op_type, side, inputs, outputs, dur, nbytes, step):
        self.op_type, self.side, self.inputs, self.outputs = op_type, side, inputs, outputs
        self.dur, self.bytes, self.step = dur, nbytes, step


def in_windows(events, windows):
    """The events wholly inside one of `windows` ((t0_us, t1_us, step) triples), each tagged with
    its window's step as event["_step"]."""
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        ts, end = e["ts"], e["ts"] + e.get("dur", 0.0)
        for w0, w1, step in windows:
            if ts >= w0 - 0.001 and end <= w1 + 0.001:  # (the JSON rounds to 1 ns)
                e["_step"] = step
                out.append(e)
                break
    return out


def op_records(events):
    """The counted op calls among trace events (depth-0 eager ops and graph kernels)."""
    recs = []
    for e in events:
        cat = e.get("cat")
        if cat == "op":
            a = e.get("args", {})
            if a.get("depth", 0) != 0:
                continue
            recs.append(OpRecord(e["name"], "eager", a.get("inputs", ""), a.get("outputs", ""),
                                 e.get("dur", 0.0), int(a.get("bytes", 0)), e.get("_step")))
        elif cat == "kernel":
            recs.append(OpRecord(e["name"], "graph", "", "", e.get("dur", 0.0), 0, e.get("_step")))
    return recs


def by_type(recs):
    """[(op_type, occurrences, total_us, avg_us, percent)] by total time, largest first."""
    total = sum(r.dur for r in recs) or 1.0
    acc = {}
    for r in recs:
        n, t = acc.get(r.op_type, (0, 0.0))
        acc[r.op_type] = (n + 1, t + r.dur)
    rows = [(k, n, t, t / n, 100.0 * t / total) for k, (n, t) in acc.items()]
    rows.sort(key=lambda r: (-r[2], r[0]))
    return rows


def by_op(recs):
    """[(side, op_type, op_name, inputs, outputs, occurrences, total_us, avg_us, percent, bytes)]:
    one row per op type and input signature (an op's full name in MindSpore's tables)."""
    total = sum(r.dur for r in recs) or 1.0
    acc = {}
    order = []
    for r in recs:
        key = (r.side, r.op_type, r.inputs)
        if key not in acc:
            acc[key] = [r.outputs, 0, 0.0, 0]
            order.append(key)
        a = acc[key]
        a[1] += 1
        a[2] += r.dur
        a[3] += r.bytes
    rows = []
    names = {}
    for side, op_type, inputs in order:
        outputs, n, t, nbytes = acc[(side, op_type, inputs)]
        k = names.get(op_type, 0)
        names[op_type] = k + 1
        rows.append((side, op_type, "%s-op%d" % (op_type, k), inputs, outputs, n, t, t / n,
                     100.0 * t / total, nbytes))
    rows.sort(key=lambda r: (-r[6], r[2]))
    return rows


def _fmt(v):
    return "%.3f" % v if isinstance(v, float) else v


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([_fmt(v) for v in r])


def write_all(folder, device_id, events, recs, memory, extra_meta, pretty=False):
    """The profiler folder's files; returns by_type(recs)."""
    os.makedirs(folder, exist_ok=True)
    clean = []
    for e in events:
        e = dict(e)
        e.pop("_step", None)
        clean.append(e)
    doc = {"displayTimeUnit": "ms", "otherData": dict(extra_meta, producer="pijit.Profiler"),
           "traceEvents": clean}
    with open(os.path.join(folder, TIMELINE.format(device_id)), "w") as f:
        json.dump(doc, f, indent=1 if pretty else None)
    types = by_type(recs)
    write_csv(os.path.join(folder, TYPE_CSV.format(device_id)),
              ["op_type", "op_occurrences", "total_time(us)", "avg_time(us)", "percent"], types)
    write_csv(os.path.join(folder, DETAIL_CSV.format(device_id)),
              ["op_side", "op_type", "op_name", "input_info", "output_info", "op_occurrences",
               "op_total_time(us)", "op_avg_time(us)", "total_percent", "output_bytes"], by_op(recs))
    if memory:
        acc = {}
        for r in recs:
            if r.side != "eager":
                continue
            n, b, m = acc.get(r.op_type, (0, 0, 0))
            acc[r.op_type] = (n + 1, b + r.bytes, max(m, r.bytes))
        rows = sorted(((k,) + v for k, v in acc.items()), key=lambda r: (-r[2], r[0]))
        write_csv(os.path.join(folder, MEMORY_CSV.format(device_id)),
                  ["op_type", "op_occurrences", "allocated_bytes", "max_bytes_per_call"], rows)
        with open(os.path.join(folder, MEMORY_SUMMARY.format(device_id)), "w") as f:
            json.dump(memory_summary(recs, memory), f, indent=1)
    return types


def memory_summary(recs, memory):
    eager = [r for r in recs if r.side == "eager"]
    return {
        "allocated_bytes": sum(r.bytes for r in eager),
        "largest_op_allocation_bytes": max([r.bytes for r in eager] or [0]),
        "cached_storage_bytes_at_start": memory.get("cached_start", 0),
        "cached_storage_bytes_at_stop": memory.get("cached_stop", 0),
        "peak_bytes": None,
        "note": "pijit's allocator keeps no count of live bytes, so no peak: allocated_bytes sums the storage "
                "each eager op's outputs newly hold (views and in-place results hold none); captured "
                "graphs' buffers are planned per graph and not counted",
    }


def table(types, limit=10):
    """The top op types as text (what analyse prints)."""
    lines = ["%-28s %8s %14s %12s %8s" % ("op_type", "calls", "total(us)", "avg(us)", "share")]
    for name, n, t, avg, pct in types[:limit]:
        lines.append("%-28s %8d %14.3f %12.3f %7.2f%%" % (name[:28], n, t, avg, pct))
    return "\n".join(lines)


def op_info(recs, names):
    """op_analyse's JSON text: per requested op type, its calls grouped by input signature."""
    out = {}
    rows = by_op(recs)
    for name in names:
        info = []
        for side, op_type, op_name, inputs, outputs, n, t, avg, pct, nbytes in rows:
            if op_type != name:
                continue
            info.append({"op_side": side, "op_type": op_type, "op_name": op_name, "input_info": inputs,
                         "output_info": outputs, "op_occurrences": n, "op_total_time(us)": round(t, 3),
                         "op_avg_time(us)": round(avg, 3), "proportion": round(pct, 3),
                         "output_bytes": nbytes})
        out[name] = {"op_info": info, "op_occurrences": sum(i["op_occurrences"] for i in info),
                     "op_total_time(us)": round(sum(i["op_total_time(us)"] for i in info), 3)}
    return json.dumps(out)
