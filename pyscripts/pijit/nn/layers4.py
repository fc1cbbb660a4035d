"""Layers beyond layers3: misc nn cells (BiDense, LRN, LPPool, MaxUnpool, Upsample, ...)."""
__all__ = []
