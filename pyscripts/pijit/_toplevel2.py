"""mindspore's remaining top-level names (dtype aliases, logging, sparse tensor classes, ...)."""
__all__ = []
