"""Detection and image ops (NMS, IOU, boxes, ROIAlign, CropAndResize, colour spaces, grid sampling): primitives and functional forms."""
__all__ = []
