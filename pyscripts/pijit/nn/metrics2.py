"""Metrics beyond nn.metrics first set (ConfusionMatrix, ROC, Dice, ...)."""
__all__ = []
