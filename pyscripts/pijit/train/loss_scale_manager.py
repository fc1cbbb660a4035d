"""mindspore.train.loss_scale_manager: the loss-scale managers (the same classes as mindspore.amp's)."""
from pijit.amp import LossScaleManager, FixedLossScaleManager, DynamicLossScaleManager  # noqa: F401

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]
