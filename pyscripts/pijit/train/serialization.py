"""mindspore.train.serialization: checkpoints (pijit's format, docs/checkpoint.md)."""
from pijit.serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]
