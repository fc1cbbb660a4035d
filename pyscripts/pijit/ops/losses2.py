"""Loss functions beyond ops' first set (CTC, margin, triplet, soft-margin, ...): functional forms and primitives."""
__all__ = []
