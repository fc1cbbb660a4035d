"""mindspore.train: Model, the callbacks, the metrics, DatasetHelper / data_sink, the loss-scale
managers and the checkpoint functions (MindSpore's names)."""
from pijit.amp import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager  # noqa: F401
from pijit.amp import build_train_network  # noqa: F401
from pijit.serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401
from pijit.train import loss_scale_manager, serialization  # noqa: F401
from pijit.train.serialization import merge_sliced_parameter, async_ckpt_thread_status, export, load  # noqa: F401
from pijit.train import callback, summary  # noqa: F401
from pijit.train.callback import *  # noqa: F401,F403
from pijit.train.summary import SummaryRecord  # noqa: F401
from pijit.train.model import Model  # noqa: F401
from pijit.train.dataset_helper import DatasetHelper, connect_network_with_dataset  # noqa: F401
from pijit.train.data_sink import data_sink  # noqa: F401
from pijit.print_file import parse_print  # noqa: F401
from pijit.nn import metrics as _metrics
from pijit.nn.metrics import (Metric, Accuracy, Loss, MAE, MSE, Precision, Recall, Fbeta, F1,  # noqa: F401
                              TopKCategoricalAccuracy, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                              get_metric_fn, names, rearrange_inputs, auc)
from pijit.nn import metrics2 as _metrics2

# The metrics nn.metrics2 adds (ConfusionMatrix, ROC, Dice, ...) as they appear there.
_METRIC_NAMES = ["Metric", "Accuracy", "Loss", "MAE", "MSE", "Precision", "Recall", "Fbeta", "F1",
                 "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "get_metric_fn",
                 "names", "rearrange_inputs", "auc"]
for _name in getattr(_metrics2, "__all__", []):
    if _name not in _METRIC_NAMES:
        globals()[_name] = getattr(_metrics2, _name)
        _METRIC_NAMES.append(_name)

__all__ = ["Model", "DatasetHelper", "connect_network_with_dataset", "build_train_network", "LossScaleManager",
           "FixedLossScaleManager", "DynamicLossScaleManager", "save_checkpoint", "load_checkpoint",
           "load_param_into_net", "merge_sliced_parameter", "async_ckpt_thread_status", "data_sink", "SummaryRecord",
           "export", "load", "parse_print"]
__all__.extend(callback.__all__)
__all__.extend(_METRIC_NAMES)
