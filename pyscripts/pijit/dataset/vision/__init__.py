"""mindspore.dataset.vision: image transforms (issue 43)."""
__all__ = []
