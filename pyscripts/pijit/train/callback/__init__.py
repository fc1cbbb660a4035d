"""mindspore.train.callback: the callbacks Model.train, Model.eval and Model.fit run."""
from pijit.train.callback._callback import Callback, RunContext  # noqa: F401
from pijit.train.callback._callback import _CallbackManager, _InternalCallbackParam  # noqa: F401
from pijit.train.callback._checkpoint import (CheckpointConfig, ModelCheckpoint, BackupAndRestore,  # noqa: F401
                                              OnRequestExit)
from pijit.train.callback._monitors import (LossMonitor, TimeMonitor, History, LambdaCallback,  # noqa: F401
                                            LearningRateScheduler, EarlyStopping, ReduceLROnPlateau)
from pijit.train.callback._summary import SummaryCollector, SummaryLandscape  # noqa: F401

__all__ = ["Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "SummaryCollector", "CheckpointConfig",
           "RunContext", "LearningRateScheduler", "SummaryLandscape", "History", "LambdaCallback",
           "ReduceLROnPlateau", "EarlyStopping", "OnRequestExit", "BackupAndRestore"]
