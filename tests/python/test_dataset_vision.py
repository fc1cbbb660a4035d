"""mindspore.dataset.vision / transforms on the interpreters' numpy (numpy_lite on the stdlib
Pythons, real numpy on the system python3): values against hand computation (float32 rounding
emulated step by step), MindSpore's errors, seeded randomness, and fused == step-by-step."""
import struct
import unittest

import pijit.dataset as ds
from pijit.dataset import transforms, vision
from pijit.dataset._compat import np
from pijit.dataset.vision import Border, Inter
from pijit.dataset.vision import c_transforms as c_vision, py_transforms as py_vision
from pijit.dataset.transforms import c_transforms as c_trans, py_transforms as py_trans


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def image(h, w, c=3, seed=0):
    """A deterministic uint8 image as nested lists and as an array."""
    vals = [[[(seed * 31 + y * 17 + x * 7 + k * 101) % 256 for k in range(c)] for x in range(w)]
            for y in range(h)]
    return vals, np.array(vals, dtype=np.uint8)


def close(a, b, tol=0.0):
    fa = [float(v) for v in flat(a)]
    fb = [float(v) for v in flat(b)]
    return len(fa) == len(fb) and all(abs(x - y) <= tol for x, y in zip(fa, fb))


def flat(x):
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, list):
        out = []
        for v in x:
            out.extend(flat(v))
        return out
    return [x]


class TestValues(unittest.TestCase):
    def test_rescale_float32_steps(self):
        vals, img = image(4, 5)
        out = vision.Rescale(1.0 / 255.0, -0.5)(img)
        self.assertEqual(str(out.dtype), "float32")
        self.assertEqual(tuple(out.shape), (4, 5, 3))
        s, b = f32(1.0 / 255.0), f32(-0.5)
        want = [[[f32(f32(v * s) + b) for v in px] for px in row] for row in vals]
        self.assertEqual(out.tolist(), want)

    def test_normalize_hwc_chw_and_single_value(self):
        vals, img = image(3, 4)
        mean, std = [125.3, 123.0, 113.9], [63.0, 62.1, 66.7]
        out = vision.Normalize(mean, std)(img)
        want = [[[f32(f32(px[c] - f32(mean[c])) / f32(std[c])) for c in range(3)] for px in row]
                for row in vals]
        self.assertEqual(out.tolist(), want)
        chw = vision.HWC2CHW()(img)
        out2 = vision.Normalize(mean, std, is_hwc=False)(chw)
        self.assertEqual(out2.tolist(), vision.HWC2CHW()(out).tolist())
        one = vision.Normalize([100.0], [50.0])(img)
        self.assertEqual(one.tolist(), [[[f32(f32(v - 100.0) / 50.0) for v in px] for px in row]
                                        for row in vals])
        gray = np.array([[0, 255], [10, 20]], dtype=np.uint8)
        self.assertEqual(vision.Normalize([10.0], [2.0])(gray).tolist(), [[-5.0, 122.5], [0.0, 5.0]])

    def test_normalize_pad(self):
        vals, img = image(2, 3)
        out = vision.NormalizePad([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])(img)
        self.assertEqual(tuple(out.shape), (2, 3, 4))
        self.assertEqual(out.tolist(), [[[float(v) for v in px] + [0.0] for px in row] for row in vals])
        h = vision.NormalizePad([0.0], [2.0], dtype="float16")(img)
        self.assertEqual(str(h.dtype), "float16")
        self.assertEqual(h.tolist(), [[[v / 2.0 for v in px] + [0.0] for px in row] for row in vals])

    def test_hwc2chw(self):
        vals, img = image(2, 3, 2)
        out = vision.HWC2CHW()(img)
        self.assertEqual(str(out.dtype), "uint8")
        self.assertEqual(out.tolist(), [[[vals[y][x][c] for x in range(3)] for y in range(2)]
                                        for c in range(2)])
        gray = np.array([[1, 2], [3, 4]], dtype=np.uint8)
        self.assertEqual(vision.HWC2CHW()(gray).tolist(), [[1, 2], [3, 4]])

    def test_to_tensor(self):
        vals, img = image(2, 2)
        out = vision.ToTensor()(img)
        self.assertEqual(str(out.dtype), "float32")
        s = f32(f32(1.0) / 255.0)
        self.assertEqual(out.tolist(), [[[f32(vals[y][x][c] * s) for x in range(2)] for y in range(2)]
                                        for c in range(3)])
        gray = np.array([[0, 255]], dtype=np.uint8)
        g = vision.ToTensor()(gray)
        self.assertEqual(tuple(g.shape), (1, 1, 2))
        self.assertEqual(g.tolist(), [[[0.0, 1.0]]])
        self.assertEqual(str(vision.ToTensor(np.float16)(img).dtype), "float16")
        self.assertEqual(str(vision.ToTensor(np.float64)(img).dtype), "float64")

    def test_flips_and_crop(self):
        vals, img = image(3, 4)
        self.assertEqual(vision.RandomHorizontalFlip(1.0)(img).tolist(), [row[::-1] for row in vals])
        self.assertEqual(vision.RandomVerticalFlip(1.0)(img).tolist(), vals[::-1])
        self.assertEqual(vision.RandomHorizontalFlip(0.0)(img).tolist(), vals)
        self.assertEqual(vision.HorizontalFlip()(img).tolist(), [row[::-1] for row in vals])
        self.assertEqual(vision.Crop((1, 2), (2, 2))(img).tolist(), [r[2:4] for r in vals[1:3]])
        with self.assertRaisesRegex(RuntimeError, "Crop: Crop width dimension: 6 exceeds image width: 4"):
            vision.Crop((0, 2), (1, 4))(img)

    def test_center_crop_pads_with_zeros_odd_on_top_left(self):
        vals, img = image(2, 3, 1)
        out = vision.CenterCrop((5, 2))(img)  # height padded 3 (2 top, 1 bottom), width cropped
        z = [[0], [0]]
        want = [z, z] + [r[0:2] for r in vals] + [z]
        self.assertEqual(out.tolist(), want)
        self.assertEqual(vision.CenterCrop(1)(img).tolist(), [[vals[0][1]]])

    def test_pad_modes_as_mindspore_documents(self):
        row = np.array([[1, 2, 3, 4]], dtype=np.uint8)
        get = lambda mode: vision.Pad([2, 0, 2, 0], padding_mode=mode)(row).tolist()[0]  # noqa: E731
        self.assertEqual(get(Border.REFLECT), [3, 2, 1, 2, 3, 4, 3, 2])
        self.assertEqual(get(Border.SYMMETRIC), [2, 1, 1, 2, 3, 4, 4, 3])
        self.assertEqual(get(Border.EDGE), [1, 1, 1, 2, 3, 4, 4, 4])
        self.assertEqual(get(Border.CONSTANT), [0, 0, 1, 2, 3, 4, 0, 0])
        two = vision.Pad((2, 1))(row)  # (left and top 2, right and bottom 1)
        self.assertEqual(tuple(two.shape), (1 + 2 + 1, 4 + 2 + 1))
        self.assertEqual(two.tolist()[2], [0, 0, 1, 2, 3, 4, 0])
        # (left, top, right, bottom) and the per-channel fill
        vals, img = image(1, 1)
        out = vision.Pad([1, 0, 0, 1], fill_value=(7, 8, 9))(img)
        self.assertEqual(out.tolist(), [[[7, 8, 9], vals[0][0]], [[7, 8, 9], [7, 8, 9]]])

    def test_random_crop_is_a_crop_of_the_padded_image_and_seeded(self):
        vals, img = image(6, 5)
        padded = vision.Pad(2, fill_value=(1, 2, 3))(img).tolist()
        ds.config.set_seed(7)
        op = vision.RandomCrop((6, 5), padding=2, fill_value=(1, 2, 3))
        seen = set()
        outs = []
        for _ in range(30):
            out = op(img).tolist()
            outs.append(out)
            hits = [(y, x) for y in range(5) for x in range(5)
                    if [r[x:x + 5] for r in padded[y:y + 6]] == out]
            self.assertTrue(hits)
            seen.add(hits[0])
        self.assertGreater(len(seen), 5)
        ds.config.set_seed(7)
        op2 = vision.RandomCrop((6, 5), padding=2, fill_value=(1, 2, 3))
        self.assertEqual([op2(img).tolist() for _ in range(30)], outs)

    def test_random_crop_pad_if_needed_pads_both_sides_by_the_shortfall(self):
        img = np.array([[5, 6]], dtype=np.uint8)
        ds.config.set_seed(3)
        op = vision.RandomCrop((3, 2), pad_if_needed=True, padding_mode=Border.EDGE)
        outs = {tuple(flat(op(img))) for _ in range(40)}
        # padded to 5 rows of [5, 6]: every crop is three copies
        self.assertEqual(outs, {(5, 6, 5, 6, 5, 6)})
        with self.assertRaisesRegex(RuntimeError, "RandomCrop: invalid crop size, crop size is "
                                                  "bigger than the image dimensions"):
            vision.RandomCrop((3, 2))(img)

    def test_resize_sizes_and_hand_values(self):
        _, img = image(10, 20)
        self.assertEqual(tuple(vision.Resize(5)(img).shape), (5, 10, 3))
        _, tall = image(7, 3)
        self.assertEqual(tuple(vision.Resize(4)(tall).shape), (9, 4, 3))  # lround(7/3*4) = 9
        a = np.array([[0.0, 8.0]], dtype=np.float32)
        self.assertEqual(vision.Resize((1, 4))(a).tolist(), [[0.0, 2.0, 6.0, 8.0]])
        self.assertEqual(vision.Resize((1, 4), Inter.NEAREST)(a).tolist(), [[0.0, 0.0, 8.0, 8.0]])
        u = np.array([[0, 255]], dtype=np.uint8)
        self.assertEqual(vision.Resize((1, 4))(u).tolist(), [[0, 64, 191, 255]])
        const = np.array([[[9, 9, 9]] * 6] * 6, dtype=np.uint8)
        for mode in (Inter.LINEAR, Inter.CUBIC, Inter.AREA, Inter.NEAREST):
            self.assertEqual(set(flat(vision.Resize((4, 9), mode)(const))), {9})
        area = np.array([[0, 2, 4, 8]], dtype=np.uint8)
        self.assertEqual(vision.Resize((1, 2), Inter.AREA)(area).tolist(), [[1, 6]])

    def test_random_resized_crop(self):
        _, img = image(20, 30)
        ds.config.set_seed(1)
        op = vision.RandomResizedCrop((8, 6))
        out = op(img)
        self.assertEqual(tuple(out.shape), (8, 6, 3))
        self.assertEqual(str(out.dtype), "uint8")


class TestFusion(unittest.TestCase):
    def chain(self):
        return [vision.RandomCrop(8, padding=2), vision.RandomHorizontalFlip(),
                vision.Rescale(1.0 / 255.0, 0.0),
                vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
                vision.HWC2CHW()]

    def test_fused_equals_step_by_step(self):
        _, img = image(8, 8)
        ds.config.set_seed(11)
        fused = transforms.Compose(self.chain())
        got = [fused(img).tolist() for _ in range(20)]
        ds.config.set_seed(11)
        ops = self.chain()
        want = []
        for _ in range(20):
            x = img
            for op in ops:
                x = op(x)
            want.append(x.tolist())
        self.assertEqual(got, want)
        self.assertEqual(len({str(g) for g in got}) > 1, True)

    def test_compose_nested_and_non_image_steps(self):
        _, img = image(4, 4)
        c = transforms.Compose([transforms.Compose([vision.HWC2CHW()]), transforms.TypeCast(np.float32),
                                lambda x: x * 2])
        out = c(img)
        self.assertEqual(out.tolist(), (vision.HWC2CHW()(img).astype(np.float32) * 2).tolist())

    def test_map_pipeline(self):
        _, img = image(8, 8)
        data = [(img, np.array(i % 3, dtype=np.int32)) for i in range(6)]
        d = ds.GeneratorDataset(data, ["image", "label"], shuffle=False)
        d = d.map(self.chain(), input_columns="image")
        d = d.map(transforms.OneHot(3), input_columns="label")
        d = d.batch(4, drop_remainder=True)
        rows = list(d.create_tuple_iterator(output_numpy=True))
        self.assertEqual(len(rows), 1)
        self.assertEqual(tuple(rows[0][0].shape), (4, 3, 8, 8))
        self.assertEqual(rows[0][1].tolist(), [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])


class TestTransforms(unittest.TestCase):
    def test_typecast_and_totype(self):
        from pijit import dtype as mstype
        a = np.array([1.7, -2.2], dtype=np.float32)
        self.assertEqual(transforms.TypeCast(mstype.int32)(a).tolist(), [1, -2])
        self.assertEqual(str(vision.ToType(np.int16)(a).dtype), "int16")

    def test_onehot(self):
        self.assertEqual(transforms.OneHot(4)(np.array(2, dtype=np.int32)).tolist(), [0, 0, 1, 0])
        out = transforms.OneHot(3, smoothing_rate=0.3)(np.array([0, 2], dtype=np.int64))
        self.assertEqual(str(out.dtype), "float32")
        hi, lo = f32(0.7 + 0.1), f32(0.1)
        self.assertTrue(close(out, [[hi, lo, lo], [lo, lo, hi]], 1e-7))
        with self.assertRaisesRegex(RuntimeError, "OneHot: index values should not bigger than num "
                                                  "classes: 3, but got: 3"):
            transforms.OneHot(3)(np.array(3, dtype=np.int32))
        with self.assertRaisesRegex(RuntimeError, "OneHot: Only support input of int type"):
            transforms.OneHot(3)(np.array(1.0, dtype=np.float32))

    def test_fill_concat_duplicate_slice_padend(self):
        a = np.array([1, 2, 3], dtype=np.int32)
        self.assertEqual(transforms.Fill(7)(a).tolist(), [7, 7, 7])
        c = transforms.Concatenate(0, np.array([0], dtype=np.int32), np.array([9], dtype=np.int32))
        self.assertEqual(c(a).tolist(), [0, 1, 2, 3, 9])
        x, y = transforms.Duplicate()(a)
        self.assertEqual((x.tolist(), y.tolist()), ([1, 2, 3], [1, 2, 3]))
        self.assertEqual(transforms.Slice(slice(0, 2))(a).tolist(), [1, 2])
        self.assertEqual(transforms.Slice([0, 2])(a).tolist(), [1, 3])
        self.assertEqual(transforms.PadEnd([5], 0)(a).tolist(), [1, 2, 3, 0, 0])
        self.assertEqual(transforms.PadEnd([2])(a).tolist(), [1, 2])

    def test_random_apply_choice(self):
        ds.config.set_seed(5)
        a = np.array([1, 2], dtype=np.int32)
        ra = transforms.RandomApply([lambda x: x * 10], prob=0.5)
        outs = [ra(a).tolist() for _ in range(40)]
        self.assertEqual({str(o) for o in outs}, {"[1, 2]", "[10, 20]"})
        rc = transforms.RandomChoice([lambda x: x + 1, lambda x: x - 1])
        self.assertEqual({str(rc(a).tolist()) for _ in range(40)}, {"[2, 3]", "[0, 1]"})
        self.assertEqual(transforms.RandomApply([lambda x: x * 10], prob=1.0)(a).tolist(), [10, 20])


class TestErrors(unittest.TestCase):
    def test_argument_errors(self):
        with self.assertRaisesRegex(ValueError, "Length of mean and std must be equal."):
            vision.Normalize([1.0, 2.0], [1.0])
        with self.assertRaisesRegex(ValueError, r"Input mean_value is not within the required "
                                                r"interval of \[0, 255\]"):
            vision.Normalize([300.0], [1.0])
        with self.assertRaisesRegex(ValueError, r"Input std_value is not within the required "
                                                r"interval of \(0, 255\]"):
            vision.Normalize([1.0], [0.0])
        with self.assertRaisesRegex(TypeError, "Argument size with value 2.5 is not of type"):
            vision.Resize(2.5)
        with self.assertRaisesRegex(ValueError, "Input size is not within the required interval"):
            vision.RandomCrop(0)
        with self.assertRaisesRegex(ValueError, "Input prob is not within the required interval"):
            vision.RandomHorizontalFlip(1.5)
        with self.assertRaisesRegex(TypeError, "Argument padding_mode"):
            vision.Pad(1, padding_mode="edge")
        with self.assertRaisesRegex(TypeError, "Argument interpolation"):
            vision.Resize(4, interpolation="linear")

    def test_image_errors_name_the_transform(self):
        _, img = image(4, 4)
        with self.assertRaisesRegex(RuntimeError, "Normalize: number of channels does not match the "
                                                  "size of mean and std vectors, got channels: 3, "
                                                  "size of mean: 2"):
            vision.Normalize([1.0, 2.0], [1.0, 1.0])(img)
        flat1 = np.array([1, 2, 3], dtype=np.uint8)
        with self.assertRaisesRegex(RuntimeError, r"RandomCrop: input tensor is not in shape of "
                                                  r"<H,W> or <H,W,C>, but got rank: 1. You may need "
                                                  r"to perform Decode first."):
            vision.RandomCrop(2)(flat1)
        with self.assertRaisesRegex(RuntimeError, "Resize: input tensor is not in shape"):
            vision.Resize(2)(flat1)
        with self.assertRaisesRegex(RuntimeError, "HWC2CHW: image shape should be <H,W> or <H,W,C>, "
                                                  "but got rank: 4"):
            vision.HWC2CHW()(np.zeros((1, 1, 1, 1), dtype=np.uint8))
        with self.assertRaisesRegex(TypeError, "Input should be NumPy or PIL image, got <class 'list'>"):
            vision.HWC2CHW()([[1, 2]])
        with self.assertRaisesRegex(TypeError, "not supported with NumPy input"):
            vision.Resize(2, Inter.ANTIALIAS)(img)

    def test_legacy_paths(self):
        self.assertIs(c_vision.RandomCrop, vision.RandomCrop)
        self.assertIs(c_trans.OneHot, transforms.OneHot)
        self.assertIs(py_trans.OneHotOp, transforms.OneHot)
        _, img = image(2, 2)
        chw = py_vision.ToTensor()(img)
        out = py_vision.Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])(chw)
        self.assertEqual(tuple(out.shape), (3, 2, 2))
        want = [[[f32(f32(v - 0.5) / 0.5) for v in r] for r in ch] for ch in chw.tolist()]
        self.assertEqual(out.tolist(), want)


if __name__ == "__main__":
    unittest.main()
