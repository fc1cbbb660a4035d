"""Special functions, random distributions, forward-mode autodiff and the remaining misc primitives."""
__all__ = []
