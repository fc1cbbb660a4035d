"""mindspore.train.serialization: checkpoints (pijit's format, docs/checkpoint.md)."""
from pijit.serialization import save_checkpoint, load_checkpoint, load_param_into_net  # noqa: F401
from pijit._toplevel2 import merge_sliced_parameter  # noqa: F401
from pijit.export import export, load  # noqa: F401

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "merge_sliced_parameter",
           "async_ckpt_thread_status", "export", "load"]


def async_ckpt_thread_status():
    """Whether an asynchronous checkpoint save (save_checkpoint(async_save=True)) is still
    writing. pijit writes every checkpoint before save_checkpoint returns, so never: False."""
    return False
