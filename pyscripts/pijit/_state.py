"""Marks pijit library functions that capture must not trace.

Capture runs pijit's own Python functions for real (on symbolic tensors) and keeps only the ops
they record, so a function that changes pijit's runtime state (the context, the random seed,
files, introspection counters) would act once, at capture time, and never again; one that reads
such state would have its answer frozen into the graph with no guard. Capture stops instead
(B005, naming the function and `what`), and the call runs eagerly.

Output functions are marked `output` instead: capture replays the call after the graph, in
program order with the function's other side effects, with the values it was given.
"""


def runtime_state(what):
    def mark(fn):
        fn.__pijit_state__ = what
        return fn
    return mark


def output(fn):
    fn.__pijit_output__ = True
    return fn
