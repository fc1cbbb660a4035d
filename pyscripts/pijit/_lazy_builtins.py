"""Generator models of the lazy builtins zip, map, enumerate and filter. Capture simulates these
(capture/sim_generators.cc) in place of the builtin when it is given a generator the simulation
made or a user iterable: each value is produced only when the consumer asks for it, so the
argument iterators advance, and their code runs, in the order the builtin would run it. The
arguments arrive already made iterators (the builtins call iter() when they are created); `end`
is a sentinel no iterator yields."""


def zip_model(end, *its):  # (given at least one iterator)
    while True:
        vals = []
        for it in its:
            v = next(it, end)
            if v is end:
                return
            vals.append(v)
        yield tuple(vals)


def map_model(end, fn, *its):  # (map pulls from its iterators as zip does; a call of zip_model
    while True:                   # from here would be traced, as pijit's code is, not simulated)
        vals = []
        for it in its:
            v = next(it, end)
            if v is end:
                return
            vals.append(v)
        yield fn(*vals)


def enumerate_model(end, it, n):
    while True:
        v = next(it, end)
        if v is end:
            return
        yield (n, v)
        n += 1


def filter_model(end, fn, it):
    while True:
        v = next(it, end)
        if v is end:
            return
        if (v if fn is None else fn(v)):
            yield v


def sequence_iter_model(obj):
    """iter() of an object with __getitem__ and no __iter__ (the old sequence protocol): its
    items at 0, 1, 2, ... until __getitem__ raises IndexError or StopIteration."""
    i = 0
    while True:
        try:
            v = obj[i]
        except (IndexError, StopIteration):
            return
        yield v
        i += 1
