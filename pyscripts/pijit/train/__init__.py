"""mindspore.train: what pijit has of it so far. The loss-scale managers (also in
mindspore.amp) and the checkpoint functions; Model and the callbacks are issue 43's."""
from pijit.amp import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager  # noqa: F401
from pijit.serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401
from pijit.train import loss_scale_manager, serialization  # noqa: F401

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager", "save_checkpoint",
           "load_checkpoint", "load_param_into_net"]
