"""Layers beyond layers2: 3-D conv/pool/norm layers and other nn cells."""
__all__ = []
