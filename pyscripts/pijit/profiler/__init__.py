"""mindspore.Profiler / mindspore.profiler: what a program's ops cost, on pijit's trace.

    prof = Profiler(output_path="./data")      # starts recording (start_profile=True)
    train(net)
    prof.analyse()                             # stops; writes ./data/profiler/; returns the op types
    print(prof.op_analyse("MatMul"))           # one op type's calls as JSON text

While a Profiler records, every eager registry op call is one "op" span of pijit's trace (op name,
input and output dtypes/shapes, the bytes its outputs newly hold, its duration: graph/op.cc), and
captured graphs' launches and kernels are spans too (graph/plan.cc), so jitted code is profiled
with the same names. analyse() keeps the spans of the recorded windows and writes, under
output_path/profiler/, MindSpore's CPU profiler files: cpu_timeline_display_0.json (the
trace-event timeline: chrome://tracing or ui.perfetto.dev), cpu_op_type_info_0.csv (per op type:
calls, total and average microseconds, share) and cpu_op_detail_info_0.csv (per op type and input
signature); with profile_memory=True also cpu_op_memory_info_0.csv and memory_summary_0.json
(bytes allocated per op type; pijit's allocator counts no live bytes, so there is no peak figure).

Also the context-manager form (`with Profiler(...) as prof:` analyses at exit), start()/stop()
windows, and schedule(wait=, active=, warmup=, repeat=, skip_first=) with step() and
on_trace_ready (tensorboard_trace_handler). Ascend-only options (profiler_level, aicore_metrics,
profile_communication, ...) are accepted and have no effect."""
import enum
import os
import sys
import tempfile
import time
import warnings

from pijit import _C
from pijit._state import runtime_state
from pijit.profiler import analysis

__all__ = ["Profiler", "schedule", "ProfilerAction", "tensorboard_trace_handler", "tensor_board_trace_handler",
           "ProfilerLevel", "ProfilerActivity"]

_active = [0]  # Profilers recording now: op spans stay on while any does


class ProfilerLevel(enum.Enum):
    """Ascend's levels of device data; pijit records the same data at every level."""
    LevelNone = "LevelNone"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class ProfilerActivity(enum.Enum):
    """What to record: CPU (pijit's ops and graphs) is all pijit has."""
    CPU = "CPU"
    NPU = "NPU"
    GPU = "GPU"


class ProfilerAction(enum.Enum):
    """What a schedule says to do at a step."""
    NONE = 0
    WARM_UP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def _nonneg_int(name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For 'schedule', the parameter %s must be int, but got type %s" % (name, type(v).__name__))
    if v < 0:
        raise ValueError("For 'schedule', the parameter %s must be >= 0, but got %d" % (name, v))
    return v


class schedule(object):  # noqa: N801 (MindSpore's name)
    """schedule(*, wait, active, warmup=0, repeat=0, skip_first=0): after skip_first steps, cycles
    of wait steps (nothing), warmup steps (nothing recorded either: pijit needs no warm-up) and
    active steps (recorded; the last one's step() ends the cycle and calls on_trace_ready);
    repeat cycles, or as many as the steps go with repeat=0. Called with a step number, returns
    that step's ProfilerAction."""

    def __init__(self, *, wait, active, warmup=0, repeat=0, skip_first=0):
        self.wait = _nonneg_int("wait", wait)
        self.active = _nonneg_int("active", active)
        self.warmup = _nonneg_int("warmup", warmup)
        self.repeat = _nonneg_int("repeat", repeat)
        self.skip_first = _nonneg_int("skip_first", skip_first)
        if self.active < 1:
            raise ValueError("For 'schedule', the parameter active must be >= 1, but got %d" % self.active)

    def __call__(self, step):
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        cycle = self.wait + self.warmup + self.active
        if self.repeat > 0 and step // cycle >= self.repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < self.wait:
            return ProfilerAction.NONE
        if k < self.wait + self.warmup:
            return ProfilerAction.WARM_UP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    def to_dict(self):
        return {"wait": self.wait, "active": self.active, "warmup": self.warmup, "repeat": self.repeat,
                "skip_first": self.skip_first}

    def __repr__(self):
        return "schedule(%s)" % ", ".join("%s=%d" % kv for kv in self.to_dict().items())


def tensorboard_trace_handler(dir_name=None, worker_name=None, analyse_flag=True):
    """on_trace_ready for a schedule: each finished cycle is analysed into its own folder
    dir_name/<worker_name>_<time>_pijit_ms (dir_name defaults to './data', worker_name to
    '<host>_<pid>'); analyse_flag=False only stops."""
    dir_name = "./data" if dir_name is None else dir_name
    if not isinstance(dir_name, str):
        raise TypeError("For 'tensorboard_trace_handler', dir_name must be str, but got %s" % type(dir_name).__name__)
    worker = worker_name or "%s_%d" % (os.uname().nodename if hasattr(os, "uname") else "host", os.getpid())

    @runtime_state("writes a profile")
    def handler(prof):
        if not analyse_flag:
            return
        now = time.time()
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now)) + "%03d" % (int(now * 1000) % 1000)
        # Two cycles can finish within one millisecond: each still gets a folder of its own.
        path, n = os.path.join(dir_name, "%s_%s_pijit_ms" % (worker, stamp)), 1
        while os.path.exists(path):
            path, n = os.path.join(dir_name, "%s_%s_%d_pijit_ms" % (worker, stamp, n)), n + 1
        prof._analyse_into(path, prof._cycle_windows)
    return handler


tensor_board_trace_handler = tensorboard_trace_handler  # (MindSpore 2.3's spelling)

_ACCEPTED_KWARGS = ("profiler_level", "activities", "aicore_metrics", "with_stack", "profile_communication",
                    "parallel_strategy", "data_process", "op_time", "timeline_limit", "l2_cache", "hbm_ddr",
                    "pcie", "sync_enable", "data_simplification", "mstx", "export_type", "mstx_domain_include",
                    "mstx_domain_exclude", "sys_io", "sys_interconnect", "host_sys", "record_shapes",
                    "optypes_to_deal", "optypes_not_deal", "is_detail", "is_show_op_path", "subgraph",
                    "job_id", "experimental_config")


class Profiler(object):
    """Profiler(output_path='./data', profile_memory=False, start_profile=True, schedule=None,
    on_trace_ready=None, **ascend_options): see the module's text."""

    def __init__(self, output_path="./data", profile_memory=False, start_profile=True, schedule=None,
                 on_trace_ready=None, **kwargs):
        if not isinstance(output_path, str):
            raise TypeError("For 'Profiler', the parameter output_path must be str, but got type %s"
                            % type(output_path).__name__)
        for name, v in (("profile_memory", profile_memory), ("start_profile", start_profile)):
            if not isinstance(v, bool):
                raise TypeError("For 'Profiler', the parameter %s must be bool, but got type %s"
                                % (name, type(v).__name__))
        if schedule is not None and not callable(schedule):
            raise TypeError("For 'Profiler', the parameter schedule must be a mindspore.profiler.schedule")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("For 'Profiler', the parameter on_trace_ready must be callable")
        for k in kwargs:
            if k not in _ACCEPTED_KWARGS:
                warnings.warn("Profiler: the parameter %r is not supported and has no effect" % k, stacklevel=2)
        self._output_path = os.path.abspath(output_path)
        self._profile_memory = profile_memory
        self.start_profile = start_profile
        self._schedule = schedule
        self._on_trace_ready = on_trace_ready
        self._metadata = {}
        self._windows = []        # (t0_us, t1_us, step) of every recorded window
        self._cycle_windows = []  # the windows of the schedule cycle being recorded
        self._open = None         # (t0_us, step) while recording
        self._started = False
        self._recording = False
        self._step = 0
        self._memory = {}
        self._records = None      # the last analyse's op records (op_analyse reads them)
        if start_profile:
            self.start()

    # ---- recording ------------------------------------------------------------------------

    def _record_on(self):
        if not self._recording:
            self._recording = True
            _active[0] += 1
            t = _C.profile_ops(True)
            self._open = (t / 1e3, self._step)

    def _record_off(self):
        if self._recording:
            self._recording = False
            _active[0] -= 1
            t = _C.profile_ops(_active[0] > 0)
            w = (self._open[0], t / 1e3, self._open[1])
            self._windows.append(w)
            self._cycle_windows.append(w)
            self._open = None

    def _recording_step(self):
        return self._schedule is None or self._schedule(self._step) in (ProfilerAction.RECORD,
                                                                        ProfilerAction.RECORD_AND_SAVE)

    @runtime_state("starts profiling")
    def start(self):
        """Starts recording (or, with a schedule, following it from the current step)."""
        if self._started:
            raise RuntimeError("The profiler has already started. Use profiler.start() only when start_profile "
                               "value is set to False.")
        self._started = True
        self._memory.setdefault("cached_start", _C.cached_storage_bytes())
        if self._recording_step():
            self._record_on()

    @runtime_state("stops profiling")
    def stop(self):
        """Stops recording; analyse() can follow at any time."""
        if not self._started:
            raise RuntimeError("The profiler has not started, so can not stop. Please call the start() method "
                               "before calling the stop() method.")
        self._started = False
        self._record_off()
        self._memory["cached_stop"] = _C.cached_storage_bytes()

    @runtime_state("steps the profiler")
    def step(self):
        """Marks the end of a training step: follows the schedule (recording its active steps;
        the end of a cycle calls on_trace_ready) and numbers the steps of the timeline."""
        if not self._started:
            raise RuntimeError("For 'Profiler.step', the profiler has not started. Call start() first.")
        action = self._schedule(self._step) if self._schedule is not None else ProfilerAction.RECORD
        self._record_off()
        self._step += 1
        if action == ProfilerAction.RECORD_AND_SAVE:
            self._memory["cached_stop"] = _C.cached_storage_bytes()
            if self._on_trace_ready is not None:
                self._on_trace_ready(self)
            self._cycle_windows = []
        if self._recording_step():
            self._record_on()

    @property
    def step_num(self):
        return self._step

    @runtime_state("starts profiling")
    def __enter__(self):
        if not self._started:
            self.start()
        return self

    @runtime_state("stops profiling")
    def __exit__(self, exc_type, exc, tb):
        if self._started:
            self.stop()
        if exc_type is None and self._schedule is None:
            self.analyse()
        return False

    # ---- metadata (MindSpore writes it as profiler_metadata.json) ---------------------------

    def add_metadata(self, key, value):
        if not isinstance(key, str) or not isinstance(value, str):
            warnings.warn("The key and value of metadata must be string. Skip this metadata.", stacklevel=2)
            return
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        import json
        if not isinstance(key, str) or not isinstance(value, str):
            warnings.warn("The key and value of metadata must be string. Skip this metadata.", stacklevel=2)
            return
        try:
            self._metadata[key] = json.loads(value)
        except ValueError:
            warnings.warn("The metadata value must be json format string. Skip this metadata", stacklevel=2)

    # ---- analysis ---------------------------------------------------------------------------

    def _events(self, windows):
        import json
        fd, tmp = tempfile.mkstemp(suffix=".json", prefix="pijit_prof_")
        os.close(fd)
        try:
            _C.trace_write(tmp)
            with open(tmp) as f:
                doc = json.load(f)
        finally:
            os.remove(tmp)
        return analysis.in_windows(doc.get("traceEvents", []), windows)

    def _analyse_into(self, root, windows, pretty=False, step_list=None):
        if step_list is not None:
            windows = [w for w in windows if w[2] in set(step_list)]
        events = self._events(windows)
        recs = analysis.op_records(events)
        self._records = recs
        folder = os.path.join(root, "profiler")
        meta = {"steps": sorted(set(w[2] for w in windows)), "pid": os.getpid()}
        if self._metadata:
            import json
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "profiler_metadata.json"), "w") as f:
                json.dump(self._metadata, f, indent=1 if pretty else None)
        types = analysis.write_all(folder, 0, events, recs, self._memory if self._profile_memory else None,
                                   meta, pretty)
        return types

    @runtime_state("writes a profile")
    def analyse(self, offline_path=None, pretty=False, step_list=None, mode="sync"):
        """Stops recording when it runs, writes output_path/profiler/ (see the module's text),
        prints the ten op types that took the most time and returns every op type's
        (op_type, calls, total_us, avg_us, percent), largest first. step_list keeps only those
        steps' windows (Profiler.step numbers them from 0)."""
        if offline_path is not None:
            return Profiler.offline_analyse(offline_path, pretty, step_list)
        if mode not in ("sync", "async"):
            raise ValueError("For 'Profiler.analyse', mode must be 'sync' or 'async', but got %r" % (mode,))
        if self._started:
            self.stop()
        types = self._analyse_into(self._output_path, self._windows, pretty, step_list)
        sys.stdout.write(analysis.table(types) + "\n")
        return types

    @classmethod
    def offline_analyse(cls, path, pretty=False, step_list=None, data_simplification=True):
        """MindSpore analyses a killed run's raw data offline; pijit writes its files at analyse()
        and keeps no raw data, so there is nothing to analyse later."""
        raise RuntimeError("Profiler.offline_analyse: pijit keeps no raw profiling data on disk; call "
                           "Profiler.analyse() in the profiled process")

    @runtime_state("reads the profile")
    def op_analyse(self, op_name, device_id=None):
        """The calls of op type `op_name` (a str or a list of them) from the last analyse (or,
        before any, from what was recorded so far) as JSON text: per type its calls grouped by
        input signature, with counts, total/average microseconds and share."""
        if device_id is not None and (isinstance(device_id, bool) or not isinstance(device_id, int)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter device_id must be int, but got type %s"
                            % type(device_id))
        if not isinstance(op_name, (str, list)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name must be str or list, but got type %s"
                            % type(op_name))
        if not op_name:
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name cannot be \"\", '' or [].")
        names = [op_name] if isinstance(op_name, str) else list(op_name)
        recs = self._records
        if recs is None:
            windows = list(self._windows)
            if self._recording:
                windows.append((self._open[0], _C.profile_ops(True) / 1e3, self._open[1]))
            recs = analysis.op_records(self._events(windows))
        return analysis.op_info(recs, names)
