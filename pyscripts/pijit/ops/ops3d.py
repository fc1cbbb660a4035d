"""3-D convolution and pooling (Conv3D, MaxPool3D, AvgPool3D, adaptive 3-D pools, 3-D upsampling): primitives and functional forms."""
__all__ = []
