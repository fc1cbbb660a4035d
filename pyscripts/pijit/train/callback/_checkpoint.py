"""Checkpoint callbacks: CheckpointConfig and ModelCheckpoint (files named as MindSpore names
them), BackupAndRestore and OnRequestExit. Files are written by pijit.serialization's
save_checkpoint (pijit's format, docs/checkpoint.md) and read back by load_checkpoint.

The graph file: MindSpore also writes "<prefix>-graph.meta" (its graph as a protobuf) at the
first step. pijit writes none: it has no MindSpore graph protobuf, and its captured graphs are
dumped by PIJIT_DUMP_DIR instead (docs/debugging.md)."""
import os
import signal
import stat
import time

from pijit._state import runtime_state
from pijit._validate import check_bool, check_int, check_type
from pijit.train.callback._callback import Callback, logger

_INFO_LIST = ("epoch_num", "step_num")


def _make_directory(path, who):
    if not isinstance(path, str) or not path.strip():
        raise ValueError("For '%s', the argument 'directory' must be a non-empty str, but got %r." % (who, path))
    path = os.path.realpath(os.path.expanduser(path))
    os.makedirs(path, exist_ok=True)
    return path


def _unique_prefix(directory, prefix):
    """prefix, or prefix_N when checkpoints of that prefix are there already (N one more than the
    largest suffix found; a plain "prefix-..." counts as suffix 0), so runs never overwrite."""
    suffix = 0
    plen = len(prefix)
    for filename in os.listdir(directory):
        if os.path.splitext(filename)[1] != ".ckpt" or filename.endswith("_breakpoint.ckpt"):
            continue
        if not filename.startswith(prefix) or len(filename) <= plen or filename[plen].isalpha():
            continue
        index = filename[plen:].find("-")
        if index == 0:
            suffix = max(suffix, 1)
        elif index != -1:
            num = filename[plen + 1:plen + index]
            if num.isdigit():
                suffix = max(suffix, int(num) + 1)
    return "%s_%d" % (prefix, suffix) if suffix else prefix


class CheckpointConfig(object):
    """CheckpointConfig(save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
    keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
    append_info=None, enc_key=None, enc_mode='AES-GCM', exception_save=False, **kwargs): when
    ModelCheckpoint saves and what it keeps. save_checkpoint_steps wins over
    save_checkpoint_seconds, keep_checkpoint_max over keep_checkpoint_per_n_minutes (with neither
    keep rule one file is kept). saved_network (a Cell) is saved instead of the training network.
    append_info: a list of "epoch_num", "step_num" and at most one dict of str -> int, float,
    bool, str or Tensor, written into each file (load_checkpoint returns them). pijit writes
    synchronously (async_save is recorded) and has no encryption (an enc_key raises
    NotImplementedError when a checkpoint is saved)."""

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, **kwargs):
        from pijit.nn.cell import Cell
        who = "CheckpointConfig"
        values = {"save_checkpoint_steps": save_checkpoint_steps, "save_checkpoint_seconds": save_checkpoint_seconds,
                  "keep_checkpoint_max": keep_checkpoint_max,
                  "keep_checkpoint_per_n_minutes": keep_checkpoint_per_n_minutes}
        for name, v in values.items():
            if v is not None:
                check_int(who, name, v, 0)
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError("For 'CheckpointConfig', the type of 'saved_network' must be None or Cell, but got %s."
                            % type(saved_network))
        if not any(values.values()):
            raise ValueError("For 'CheckpointConfig', the input arguments 'save_checkpoint_steps', "
                             "'save_checkpoint_seconds', 'keep_checkpoint_max' and 'keep_checkpoint_per_n_minutes' "
                             "can't be all None or 0.")
        self.exception_save = check_bool(who, "exception_save", exception_save)
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if save_checkpoint_steps:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if keep_checkpoint_max:
            self._keep_checkpoint_per_n_minutes = None
        elif not keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = check_bool(who, "integrated_save", integrated_save)
        self._async_save = check_bool(who, "async_save", async_save)
        self._saved_network = saved_network
        self._append_dict = self._handle_append_info(append_info)
        if enc_key is not None and not isinstance(enc_key, bytes):
            raise TypeError("For 'CheckpointConfig', the type of 'enc_key' should be None or bytes, but got %s."
                            % type(enc_key).__name__)
        self._enc_key = enc_key
        self._enc_mode = check_type(who, "enc_mode", enc_mode, str)
        self._map_param_inc = kwargs.get("incremental", False)

    save_checkpoint_steps = property(lambda self: self._save_checkpoint_steps)
    save_checkpoint_seconds = property(lambda self: self._save_checkpoint_seconds)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_per_n_minutes = property(lambda self: self._keep_checkpoint_per_n_minutes)
    integrated_save = property(lambda self: self._integrated_save)
    async_save = property(lambda self: self._async_save)
    saved_network = property(lambda self: self._saved_network)
    enc_key = property(lambda self: self._enc_key)
    enc_mode = property(lambda self: self._enc_mode)
    append_dict = property(lambda self: self._append_dict)
    map_param_inc = property(lambda self: self._map_param_inc)

    def get_checkpoint_policy(self):
        """The saving and keeping rules as a dict."""
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}

    @staticmethod
    def _handle_append_info(append_info):
        from pijit import _C
        if append_info is None or append_info == []:
            return None
        if not isinstance(append_info, list):
            raise TypeError("For 'CheckpointConfig', the type of 'append_info' must be list, but got %s."
                            % type(append_info))
        out = {}
        for key in _INFO_LIST:
            if key in append_info:
                out[key] = 0
        dicts = 0
        for element in append_info:
            if not isinstance(element, (str, dict)):
                raise TypeError("For 'CheckpointConfig', the type of 'append_info' element must be str or dict, "
                                "but got %s." % type(element))
            if isinstance(element, str) and element not in _INFO_LIST:
                raise ValueError("For 'CheckpointConfig', the value of element in the argument 'append_info' must "
                                 "be in %s, but got %s." % (list(_INFO_LIST), element))
            if isinstance(element, dict):
                dicts += 1
                if dicts > 1:
                    raise TypeError("For 'CheckpointConfig', the element of 'append_info' must has only one dict.")
                for key, value in element.items():
                    if not isinstance(key, str) or not isinstance(value, (int, float, bool, str, _C.TensorBase)):
                        raise TypeError("For 'CheckpointConfig', the key type of the dict 'append_info' must be "
                                        "string, the value type must be int or float or bool, but got key type "
                                        "%s, value type %s" % (type(key), type(value)))
                    out[key] = value
        return out


class _CheckpointManager(object):
    """The checkpoint files of one prefix in a directory, for the keep rules."""

    def __init__(self):
        self.ckpoint_filelist = []

    @property
    def ckpoint_num(self):
        return len(self.ckpoint_filelist)

    def update_ckpoint_filelist(self, directory, prefix):
        self.ckpoint_filelist = []
        for filename in os.listdir(directory):
            if os.path.splitext(filename)[1] == ".ckpt" and filename.startswith(prefix + "-"):
                middle = filename[len(prefix):-5]
                if not any(ch.isalpha() for ch in middle):
                    self.ckpoint_filelist.append(os.path.join(directory, filename))

    def remove_ckpoint_file(self, file_name):
        try:
            os.chmod(file_name, stat.S_IWRITE)
            os.remove(file_name)
            self.ckpoint_filelist.remove(file_name)
        except (OSError, ValueError):
            logger.warning("Failed to remove the older ckpt file %s.", file_name)

    def remove_oldest_ckpoint_file(self):
        # (ties in mtime, common at one step a millisecond, broken by name: epoch_step order)
        files = sorted(self.ckpoint_filelist, key=lambda f: (os.path.getmtime(f), _epoch_step(f)))
        self.remove_ckpoint_file(files[0])

    def keep_one_ckpoint_per_minutes(self, minutes, cur_time):
        recent, oldest_file, oldest_time = [], "", cur_time
        for f in self.ckpoint_filelist:
            mtime = os.path.getmtime(f)
            if cur_time - mtime < 60 * minutes:
                recent.append(f)
                if mtime < oldest_time:
                    oldest_time, oldest_file = mtime, f
        for f in recent:
            if f != oldest_file:
                self.remove_ckpoint_file(f)


def _epoch_step(path):
    """(epoch, step) of ".../prefix-E_S.ckpt", for ordering files written in the same instant."""
    stem = os.path.basename(path)[:-5]
    tail = stem.rsplit("-", 1)[-1]
    parts = tail.split("_")
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return ()


class ModelCheckpoint(Callback):
    """ModelCheckpoint(prefix='CKP', directory=None, config=None): saves the training network's
    parameters (the network's and the optimizer's: moments, global_step) during training as
    `<directory>/<prefix>-<epoch>_<step in epoch>.ckpt`, every config.save_checkpoint_steps steps
    (or save_checkpoint_seconds), and once more at the end of training; keeps at most
    config.keep_checkpoint_max files (the oldest removed). When files of that prefix exist already
    the prefix becomes prefix_1, prefix_2, ... (MindSpore's rule). directory defaults to the
    working directory. No "-graph.meta" file is written (see the module's doc).
    latest_ckpt_file_name is the last file written."""

    def __init__(self, prefix="CKP", directory=None, config=None):
        super().__init__()
        self._latest_ckpt_file_name = ""
        self._last_time = time.time()
        self._last_time_for_keep = time.time()
        self._last_triggered_step = 0
        if not isinstance(prefix, str) or prefix.find("/") >= 0:
            raise ValueError("For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is invalid, it "
                             "must be string and does not contain '/', but got {}.".format(prefix))
        self._directory = _make_directory(directory, "ModelCheckpoint") if directory is not None else os.getcwd()
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError("For 'ModelCheckpoint', the type of argument 'config' should be 'CheckpointConfig', "
                            "but got {}.".format(type(config)))
        self._config = config
        self._manager = _CheckpointManager()
        self._prefix = _unique_prefix(self._directory, prefix)
        self._append_dict = dict(config.append_dict or {})
        self._append_epoch_num = self._append_dict.get("epoch_num", 0)
        self._append_step_num = self._append_dict.get("step_num", 0)

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") == "eval":
            return
        os.makedirs(self._directory, exist_ok=True)
        self._save_ckpt(cb_params)

    def end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") == "eval":
            return
        self._save_ckpt(cb_params, force_to_save=True)

    def _check_save_ckpt(self, cb_params, force_to_save):
        cfg = self._config
        if cfg.save_checkpoint_steps and cfg.save_checkpoint_steps > 0:
            return force_to_save or cb_params.cur_step_num >= self._last_triggered_step + cfg.save_checkpoint_steps
        if cfg.save_checkpoint_seconds and cfg.save_checkpoint_seconds > 0:
            now = time.time()
            if now - self._last_time > cfg.save_checkpoint_seconds or force_to_save:
                self._last_time = now
                return True
        return False

    def _save_ckpt(self, cb_params, force_to_save=False):
        from pijit.serialization import save_checkpoint
        if cb_params.cur_step_num == self._last_triggered_step:
            return
        if not self._check_save_ckpt(cb_params, force_to_save):
            return
        step_in_epoch = int((cb_params.cur_step_num - 1) % cb_params.batch_num + 1)
        name = "%s-%s_%s.ckpt" % (self._prefix, cb_params.cur_epoch_num, step_in_epoch)
        cfg = self._config
        self._manager.update_ckpoint_filelist(self._directory, self._prefix)
        if cfg.keep_checkpoint_max and 0 < cfg.keep_checkpoint_max <= self._manager.ckpoint_num:
            self._manager.remove_oldest_ckpoint_file()
        elif cfg.keep_checkpoint_per_n_minutes and cfg.keep_checkpoint_per_n_minutes > 0:
            now = time.time()
            if now - self._last_time_for_keep < cfg.keep_checkpoint_per_n_minutes * 60:
                self._manager.keep_one_ckpoint_per_minutes(cfg.keep_checkpoint_per_n_minutes, now)
        path = os.path.join(self._directory, name)
        self._last_time_for_keep = time.time()
        self._last_triggered_step = cb_params.cur_step_num
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = self._append_epoch_num + cb_params.cur_epoch_num
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = self._append_step_num + cb_params.cur_step_num
        network = cfg.saved_network if cfg.saved_network is not None else cb_params.train_network
        save_checkpoint(network, path, cfg.integrated_save, cfg.async_save, _json_append(self._append_dict),
                        cfg.enc_key, cfg.enc_mode)
        self._latest_ckpt_file_name = path

    @property
    @runtime_state("reads the checkpoint written last")
    def latest_ckpt_file_name(self):
        """The path of the last checkpoint written ("" before the first)."""
        return self._latest_ckpt_file_name


def _json_append(d):
    """append_info's values as the checkpoint header stores them (a Tensor as its value)."""
    from pijit import _C
    out = {}
    for k, v in d.items():
        if isinstance(v, _C.TensorBase):
            v = v.tolist()
        out[k] = v
    return out or None


class BackupAndRestore(Callback):
    """BackupAndRestore(backup_dir, save_freq='epoch', delete_checkpoint=True): saves the training
    network to <backup_dir>/backup.ckpt every save_freq epochs ('epoch': each); a training run
    that starts with that file present loads it first (resuming an interrupted run); at the end
    of training the file is deleted unless delete_checkpoint=False."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        self.backup_file = os.path.join(_make_directory(backup_dir, "BackupAndRestore"), "backup.ckpt")
        self.save_freq = 1 if save_freq == "epoch" else check_int("BackupAndRestore", "save_freq", save_freq, 1)
        self.delete_checkpoint = check_bool("BackupAndRestore", "delete_checkpoint", delete_checkpoint)

    def on_train_begin(self, run_context):
        if os.path.exists(self.backup_file):
            from pijit.serialization import load_checkpoint
            logger.info("Restore checkpoint file is %s, load checkpoint into train net.", self.backup_file)
            load_checkpoint(self.backup_file, net=run_context.original_args().train_network)

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.cur_epoch_num % self.save_freq == 0:
            from pijit.serialization import save_checkpoint
            save_checkpoint(cb_params.train_network, self.backup_file)

    def on_train_end(self, run_context):
        if self.delete_checkpoint and os.path.exists(self.backup_file):
            os.chmod(self.backup_file, stat.S_IWRITE)
            os.remove(self.backup_file)


class OnRequestExit(Callback):
    """OnRequestExit(save_ckpt=True, save_mindir=True, file_name='Net', directory='./',
    sig=signal.SIGTERM): on the signal `sig` (installed when training or evaluation begins) the run
    stops after the current step and, with save_ckpt, saves the network to
    <directory>/<file_name>_train.ckpt (_eval.ckpt in evaluation), which the next run loads when
    it begins. MINDIR export (save_mindir) is not available in pijit: no .mindir is written."""

    def __init__(self, save_ckpt=True, save_mindir=True, file_name="Net", directory="./", sig=signal.SIGTERM):
        super().__init__()
        self.save_ckpt = check_bool("OnRequestExit", "save_ckpt", save_ckpt)
        self.save_mindir = check_bool("OnRequestExit", "save_mindir", save_mindir)
        if save_ckpt or save_mindir:
            check_type("OnRequestExit", "file_name", file_name, str)
            check_type("OnRequestExit", "directory", directory, str)
            os.makedirs(os.path.abspath(directory), exist_ok=True)
            self.train_file_path = os.path.abspath(os.path.join(directory, "%s_train" % file_name))
            self.eval_file_path = os.path.abspath(os.path.join(directory, "%s_eval" % file_name))
        self.sig = check_int("OnRequestExit", "sig", sig)
        if hasattr(signal, "SIGKILL") and self.sig == signal.SIGKILL:
            raise ValueError("Not support send exit request by signal SIGKILL.")
        self.exit = False

    def _handle_signal(self, signum, frame):
        self.exit = True

    def _load(self, net, *paths):
        from pijit.serialization import load_checkpoint
        for p in paths:
            if os.path.isfile(p + ".ckpt"):
                load_checkpoint(p + ".ckpt", net=net)
                return

    def on_train_begin(self, run_context):
        signal.signal(self.sig, self._handle_signal)
        if self.save_ckpt:
            self._load(run_context.original_args().train_network, self.train_file_path)

    def on_train_step_end(self, run_context):
        if self.exit:
            run_context.request_stop()

    def on_train_epoch_end(self, run_context):
        if self.exit:
            run_context.request_stop()

    def on_train_end(self, run_context):
        if self.exit and self.save_ckpt:
            from pijit.serialization import save_checkpoint
            save_checkpoint(run_context.original_args().train_network, self.train_file_path)

    def on_eval_begin(self, run_context):
        signal.signal(self.sig, self._handle_signal)
        if self.save_ckpt:
            self._load(run_context.original_args().eval_network, self.eval_file_path, self.train_file_path)

    def on_eval_step_end(self, run_context):
        if self.exit:
            run_context.request_stop()

    def on_eval_end(self, run_context):
        if self.exit and self.save_ckpt:
            from pijit.serialization import save_checkpoint
            save_checkpoint(run_context.original_args().eval_network, self.eval_file_path)
