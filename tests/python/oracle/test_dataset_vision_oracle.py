"""mindspore.dataset.vision against numpy (and OpenCV's cv2.resize where python3-opencv is
installed; test_dataset_vision.py checks recorded cv2 outputs everywhere): seeded random images
of several shapes and dtypes, results compared bit for bit (float32 computed step by step as
MindSpore's kernels do), and the fused CIFAR-10 augmentation against the same steps in numpy with
the same random draws."""
import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
import random
import unittest

from requires import require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import cv2
except ImportError:
    cv2 = None

import pijit.dataset as ds
from pijit.dataset import transforms, vision
from pijit.dataset.vision import Border, Inter

SHAPES = [(32, 32, 3), (17, 23, 3), (9, 5, 1), (12, 7), (5, 6, 4)]


class Base(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        self.rs = np.random.RandomState(1234)

    def images(self, dtype=np.uint8):
        for shape in SHAPES:
            a = self.rs.randint(0, 256, shape)
            yield a.astype(dtype) if dtype != np.float32 else (a * 0.731).astype(np.float32)

    def same(self, got, want):
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.shape, want.shape)
        np.testing.assert_array_equal(got, want)


class Values(Base):
    def test_rescale_normalize_chain(self):
        for dtype in (np.uint8, np.float32):
            for img in self.images(dtype):
                c = img.shape[2] if img.ndim == 3 else 1
                mean = self.rs.uniform(0, 200, c).tolist()
                std = self.rs.uniform(1, 80, c).tolist()
                m32, s32 = np.float32(mean), np.float32(std)
                r = vision.Rescale(0.5, 3.0)(img)
                self.same(r, img.astype(np.float32) * np.float32(0.5) + np.float32(3.0))
                n = vision.Normalize(mean, std)(img)
                want = (img.astype(np.float32).reshape(img.shape[:2] + (c,)) - m32) / s32
                self.same(n, want.reshape(img.shape))
                f = transforms.Compose([vision.Rescale(0.5, 3.0), vision.Normalize(mean, std),
                                        vision.HWC2CHW()])(img)
                w2 = ((img.astype(np.float32) * np.float32(0.5) + np.float32(3.0))
                      .reshape(img.shape[:2] + (c,)) - m32) / s32
                self.same(f, w2.transpose(2, 0, 1) if img.ndim == 3 else w2.reshape(img.shape))

    def test_normalize_pad_and_to_tensor(self):
        for img in self.images():
            if img.ndim != 3:
                continue
            c = img.shape[2]
            out = vision.NormalizePad([10.0] * c, [3.0] * c)(img)
            want = np.concatenate([(img.astype(np.float32) - 10) / np.float32(3),
                                   np.zeros(img.shape[:2] + (1,), np.float32)], axis=2)
            self.same(out, want)
            t = vision.ToTensor()(img)
            self.same(t, (img.astype(np.float32) * (np.float32(1) / np.float32(255))).transpose(2, 0, 1))

    def test_hwc2chw_any_dtype_and_noncontiguous(self):
        for dtype in (np.uint8, np.int16, np.float64, np.bool_):
            a = self.rs.randint(0, 3, (6, 8, 3)).astype(dtype)[:, ::-1]
            self.same(vision.HWC2CHW()(a), np.ascontiguousarray(a.transpose(2, 0, 1)))

    def test_pad_modes_against_numpy_pad(self):
        modes = {Border.CONSTANT: "constant", Border.EDGE: "edge", Border.REFLECT: "reflect",
                 Border.SYMMETRIC: "symmetric"}
        for img in self.images():
            for pad in ([1, 2, 3, 4], [0, 5, 7, 0], 2):
                l, t, r, b = pad if isinstance(pad, list) else [pad] * 4
                for border, np_mode in modes.items():
                    width = ((t, b), (l, r)) + (((0, 0),) if img.ndim == 3 else ())
                    if np_mode == "reflect" and min(img.shape[:2]) < 2:
                        continue
                    want = np.pad(img, width, mode=np_mode)
                    self.same(vision.Pad(pad, padding_mode=border)(img), want)

    def test_flips_crops(self):
        for img in self.images():
            self.same(vision.HorizontalFlip()(img), np.ascontiguousarray(img[:, ::-1]))
            self.same(vision.VerticalFlip()(img), np.ascontiguousarray(img[::-1]))
            h, w = img.shape[:2]
            cc = vision.CenterCrop((h + 3, w - 1))(img)
            padded = np.pad(img, ((2, 1), (0, 0)) + (((0, 0),) if img.ndim == 3 else ()))
            self.same(cc, np.ascontiguousarray(padded[:, (w - (w - 1)) // 2:(w - (w - 1)) // 2 + w - 1]))


class FusedPipeline(Base):
    def test_cifar_augmentation_matches_numpy_with_the_same_draws(self):
        mean, std = [0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]
        seed = 2024
        ds.config.set_seed(seed)
        ops = [vision.RandomCrop(32, padding=4, fill_value=(5, 6, 7)),
               vision.RandomHorizontalFlip(), vision.Rescale(1.0 / 255.0, 0.0),
               vision.Normalize(mean, std), vision.HWC2CHW()]
        fused = transforms.Compose(ops)
        crop_rng, flip_rng = random.Random(seed), random.Random(seed)  # one generator per transform
        fill = np.array([5, 6, 7], np.uint8)
        for _ in range(50):
            img = self.rs.randint(0, 256, (32, 32, 3)).astype(np.uint8)
            got = fused(img)
            p = np.empty((40, 40, 3), np.uint8)
            p[:] = fill
            p[4:36, 4:36] = img
            x = crop_rng.randint(0, 8)
            y = crop_rng.randint(0, 8)
            c = p[y:y + 32, x:x + 32]
            if flip_rng.random() < 0.5:
                c = c[:, ::-1]
            v = c.astype(np.float32) * np.float32(1.0 / 255.0) + np.float32(0.0)
            v = (v - np.float32(mean)) / np.float32(std)
            self.same(got, np.ascontiguousarray(v.transpose(2, 0, 1)))


if cv2 is not None:
    class ResizeAgainstCv2(Base):
        def test_every_mode_bit_for_bit(self):
            modes = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.LINEAR: cv2.INTER_LINEAR,
                     Inter.CUBIC: cv2.INTER_CUBIC, Inter.AREA: cv2.INTER_AREA}
            sizes = [(64, 64), (16, 16), (13, 29), (5, 3), (100, 7), (34, 30), (11, 46)]
            for dtype in (np.uint8, np.float32):
                for img in self.images(dtype):
                    for oh, ow in sizes:
                        for mode, cv_mode in modes.items():
                            want = cv2.resize(img, (ow, oh), interpolation=cv_mode)
                            if img.ndim == 3 and img.shape[2] == 1:
                                want = want.reshape(oh, ow, 1)
                            got = vision.Resize((oh, ow), mode)(img)
                            if dtype == np.uint8:
                                self.same(got, want)
                            else:
                                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


if __name__ == "__main__":
    unittest.main()
