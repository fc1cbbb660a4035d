"""mindspore.dataset.transforms: generic transforms (issue 43)."""
__all__ = []
