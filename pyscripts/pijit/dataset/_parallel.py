"""Background prefetch and ordered parallel work for the pipeline.

Pump runs an iterator in a daemon thread and hands its items through a bounded queue, so work
ahead of the consumer (the next batch) proceeds while a training step runs. ordered_map runs a
function over a stream in a thread pool, or in forked worker processes, keeping the stream's
order. Neither can hang the consumer: every wait has a timeout after which the producer's
liveness is checked, a worker that raises hands its exception to the consumer, and a worker
process that dies breaks the pool (concurrent.futures reports it) instead of leaving a future
unresolved.
"""
import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool  # (3.7 loads the submodule lazily)
import multiprocessing
import queue
import threading

_END, _ITEM, _ERROR = 0, 1, 2
_POLL = 0.2  # seconds between liveness checks while waiting


class Pump:
    def __init__(self, iterable, size, name):
        self._q = queue.Queue(max(1, size))
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(iterable,), daemon=True,
                                        name="pijit-dataset-" + name)
        self._thread.start()

    def _put(self, msg):
        while not self._stop.is_set():
            try:
                self._q.put(msg, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, iterable):
        try:
            for item in iterable:
                if not self._put((_ITEM, item)):
                    return
            self._put((_END, None))
        except BaseException as e:  # handed to the consumer, raised there
            self._put((_ERROR, e))
        finally:
            close = getattr(iterable, "close", None)
            if close is not None and self._stop.is_set():
                try:
                    close()
                except Exception:  # an abandoned generator's cleanup: nobody to report to
                    pass

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        while True:
            try:
                kind, value = self._q.get(timeout=_POLL)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._q.empty():
                    self._done = True
                    raise RuntimeError("the dataset pipeline's prefetch thread ended without a "
                                       "result (it was interrupted)") from None
        if kind == _ITEM:
            return value
        self._done = True
        if kind == _ERROR:
            raise value
        raise StopIteration

    def close(self):
        self._stop.set()
        self._done = True

    def drain(self):
        """What the producer had queued and nobody will take (after close)."""
        out = []
        while True:
            try:
                kind, value = self._q.get_nowait()
            except queue.Empty:
                return out
            if kind == _ITEM:
                out.append(value)

    def __del__(self):
        self._stop.set()


# Functions handed to forked workers by key: the fork copies this table, so lambdas and closures
# never need pickling (only their arguments and results travel).
_REGISTRY = {}
_next_key = [0]


def _call_registered(key, args):
    return _REGISTRY[key](*args)


def fork_available():
    return "fork" in multiprocessing.get_all_start_methods()


class Workers:
    """A pool of n threads, or n forked processes, for one operation of one pipeline run.
    Processes are forked here, when the run starts, before any prefetch thread exists (a fork
    while other threads hold locks can deadlock the child)."""

    def __init__(self, fn, n, processes):
        self.fn = fn
        self.processes = processes and fork_available()
        if self.processes:
            self.key = _next_key[0]
            _next_key[0] += 1
            _REGISTRY[self.key] = fn
            self.pool = cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"))
            for f in [self.pool.submit(int, 0) for _ in range(n)]:
                f.result()
        else:
            self.pool = cf.ThreadPoolExecutor(n, thread_name_prefix="pijit-dataset-worker")

    def submit(self, *args):
        if self.processes:
            return self.pool.submit(_call_registered, self.key, args)
        return self.pool.submit(self.fn, *args)

    def close(self):
        # Processes: wait (only cancelled or finishing work is left); 3.7's pool, shut down
        # without waiting, races its own manager thread. Threads: a stuck user function must not
        # hold up the consumer.
        self.pool.shutdown(wait=self.processes)
        if self.processes:
            _REGISTRY.pop(self.key, None)


def ordered_map(workers, items, prefetch, name, describe):
    """Yields workers.fn(*item) for each item of `items`, in order, computed ahead by the pool.
    `describe(exc)` turns a worker's exception into the error the consumer sees."""
    futures = Pump((workers.submit(*item) for item in items), prefetch, name)
    try:
        for fut in futures:
            try:
                yield fut.result()
            except BrokenProcessPool as e:
                raise RuntimeError(describe(e, died=True)) from e
            except Exception as e:
                raise RuntimeError(describe(e, died=False)) from e
    finally:
        futures.close()
        for f in futures.drain():
            f.cancel()
