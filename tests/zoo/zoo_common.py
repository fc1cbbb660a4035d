"""What every zoo script shares: seeded stand-ins for the datasets, a same-start copy of a network,
the comparison of the eager and the jitted run, and the one summary line the tests read.

The scripts themselves are written as MindSpore's model zoo writes its networks; only this file
knows it may be running under pijit (it asks `mindspore` for pijit's capture counters when they
exist, and reports -1 where they do not, as with MindSpore itself).
"""
import json
import math
import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, context

# losses of the jitted run may differ from the eager run's by this much (relative) and still count
# as equal; `bitwise` in the summary says whether they are the very same floats
TOLERANCE = 1e-5


def seeded(seed):
    """numpy's and MindSpore's global seeds, as the zoo's train.py sets them."""
    np.random.seed(seed)
    ms.set_seed(seed)


def images(seed, shape, classes):
    """A fixed batch of float32 images and int32 labels in [0, classes)."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.randint(0, classes, size=(shape[0],)).astype(np.int32)
    return Tensor(x), Tensor(y)


def same_start(src, dst):
    """dst takes src's parameters (trainable and BatchNorm statistics alike), as a checkpoint would."""
    params = {name: Parameter(Tensor(p.asnumpy()), name=name) for name, p in src.parameters_and_names()}
    missing = ms.load_param_into_net(dst, params)
    if missing and any(missing):
        raise RuntimeError("same_start: parameters not loaded: %r" % (missing,))


def as_float(loss):
    if isinstance(loss, (tuple, list)):
        loss = loss[0]
    return float(loss.asnumpy())


def capture_counts(step, since=(0, 0)):
    """(graphs, breaks) that capture has made for the code of step (a jitted function or a Cell:
    its construct) less `since` (the counts before the jitted run: under `pijit run` the eager run
    of the same code may have been captured too); (-1, -1) where `mindspore` has no capture
    counters (MindSpore itself)."""
    stats = getattr(ms, "jit_stats", None)
    if stats is None:
        return -1, -1
    s = stats(step)
    return s["graphs"] - since[0], len(s["break_reasons"]) - since[1]


def report(net, eager, jitted, graphs, breaks, **extra):
    """Prints the summary line `ZOO {json}` and returns its dict (jitted None: an eager run alone)."""
    if jitted is None:
        finite = all(math.isfinite(v) for v in eager)
        out = {"net": net, "steps": len(eager), "eager": eager, "jit": None, "bitwise": None, "equal": None,
               "decreased": finite and eager[-1] < eager[0], "graphs": graphs, "breaks": breaks}
        out.update(extra)
        print("ZOO " + json.dumps(out, sort_keys=True))
        sys.stdout.flush()
        return out
    diffs = [abs(a - b) / max(abs(a), 1e-30) for a, b in zip(eager, jitted)]
    finite = all(math.isfinite(v) for v in eager + jitted)
    out = {
        "net": net,
        "steps": len(eager),
        "eager": eager,
        "jit": jitted,
        "bitwise": eager == jitted,
        "max_rel_diff": max(diffs) if diffs else 0.0,
        "tolerance": TOLERANCE,
        "equal": finite and len(eager) == len(jitted) and all(d <= TOLERANCE for d in diffs),
        "decreased": finite and eager[-1] < eager[0] and jitted[-1] < jitted[0],
        "graphs": graphs,
        "breaks": breaks,
    }
    out.update(extra)
    print("ZOO " + json.dumps(out, sort_keys=True))
    sys.stdout.flush()
    return out


def pynative():
    context.set_context(mode=context.PYNATIVE_MODE)


def graph_mode():
    context.set_context(mode=context.GRAPH_MODE)
