"""Sparse tensors (COO, CSR) and their functions."""
__all__ = []
