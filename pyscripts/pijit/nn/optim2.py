"""Optimizers beyond nn.optim's first set."""
__all__ = []
