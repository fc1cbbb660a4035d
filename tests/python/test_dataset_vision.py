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


# cv2.resize (OpenCV 4.6, which MindSpore's Resize calls) of golden_image(h, w, c), uint8, as hex
CV_RESIZE = [
    ((5, 7, 3), (9, 4), 'NEAREST',
     '0049920b549d216ab33780c90049920b549d216ab33780c9256eb7438cd57fc811bb044d256eb7438cd5'
     '7fc811bb044d4a93dc7bc40ddd266fba034c4a93dc7bc40ddd266fba034c6fb801b3fc45b6ff48b9024b'
     '6fb801b3fc45b6ff48b9024b94dd26eb347d145da63d86cf'),
    ((5, 7, 3), (9, 4), 'LINEAR',
     '044d961760a92a73bc3e87d0135ca5317ab84f988c6e61aa2b74bd5ca5d28dd63bbe236c448dab87c296'
     '97d129d31b645ca58eb2db4494bd26d9226b75be4ed49266c8865adf27718dcc1fe7507ded5683ce337c'
     'a6af38bf2867d8418061559eb49e46a8115acc357e2069b2'),
    ((5, 7, 3), (9, 4), 'CUBIC',
     '0048911059a51f66cb3095dc0e57a52c77c24d9e8e6c5fad2770bf5aa5e28fea35c2136c4189b88cda9c'
     '97f90de4005c58a18eb5e1478fcd21dd156f6fcc41e89664cc905df51a6b8bdc12f13986fb528ece3179'
     'a9b931c21768e93783555aa2bc9d4e9e0650d82a760075be'),
    ((5, 7, 3), (9, 4), 'AREA',
     '054e97145da62972bb3d86cf0e57a0236cb53e879d5a6fb9327bc45da6ef94dd26cc155e448daa79c2a5'
     '99c52bd019625fa883a5ee37a1a133d61f687ac346d09662cb895ddc256e8cd51eed5b7fe77979e02972'
     'b0a142cc1c5eb64882495ea7b9954bc40d56aa3c85236cb5'),
    ((6, 6, 1), (3, 3), 'NEAREST',
     '00162c4aac8994bde6'),
    ((6, 6, 1), (3, 3), 'LINEAR',
     '1d466f7acebe97726e'),
    ((6, 6, 1), (3, 3), 'CUBIC',
     '173d7373e9c0a05f6b'),
    ((6, 6, 1), (3, 3), 'AREA',
     '1d466f7acebe97726e'),
    ((4, 9, 3), (7, 13), 'NEAREST',
     '0049920049920b549d165fa8165fa8216ab32c75be2c75be3780c9428bd4428bd44d96df58a1ea004992'
     '0049920b549d165fa8165fa8216ab32c75be2c75be3780c9428bd4428bd44d96df58a1ea256eb7256eb7'
     '438cd561aaf361aaf37fc8119de62f9de62fbb044dd9226bd9226b72bb0490d922256eb7256eb7438cd5'
     '61aaf361aaf37fc8119de62f9de62fbb044dd9226bd9226b72bb0490d9224a93dc4a93dc7bc40dacf53e'
     'acf53edd266f89d21b89d21bba034ceb347deb347d97e029c8115a4a93dc4a93dc7bc40dacf53eacf53e'
     'dd266f89d21b89d21bba034ceb347deb347d97e029c8115a6fb8016fb801b3fc45f74089f74089b6ff48'
     'fa438cfa438cb9024bfd468ffd468fbc054e004992'),
    ((4, 9, 3), (7, 13), 'LINEAR',
     '004992064f980d569f155ea71d66af246db62c75be347cc63b84cd438cd54a93dc529be458a1ea0d569f'
     '1760a9236cb52f78c13b859548917f549d8b606a976d5ba3756aac61959862ab996cb5a2226bb4327bc4'
     '458ed759a2eb6db66d81ca2595de39a94d4dbc1861c7346b8597297cc6218cd5303881ca4d969a68b17a'
     '83cc959f9962a6963893dc25ae4640ca135cdb376d9aa82c97a429ac753e4c96cc68b1678acf1dade63f'
     'ca7a5cc3625691c823ad3f3fcd165fe64178adac3fa87a43ba155e62ab4f83cc3fadd03fd78869cd9e5f'
     'c89f5ad27664c12653d11a63f14183bf4f517f455d47357e6fb80193dd26c2d055f24e84cfb561cbc55d'
     'fa438ccd165fd31c65f8418acb145d65246d004992'),
    ((4, 9, 3), (7, 13), 'CUBIC',
     '00458e0049920851990e579e145db61b63c9216acc2782d22d94d83596e04492f05096fb539cff09529a'
     '125bac1f68c62971d0348895439d73549d8e5f69996e50a9736aae5c91975cb59769c3a41f68b02e77c6'
     '458eec569fff69bb6881df0597e038aa464bc80068cb316b80962171d8128ce22d347deb4990a06abd71'
     '82ea9bae8f61b2911b93f40db2432ce3005dea2e6495c91297c606c96c294a93e264af5e8fdc00aff633'
     'db6469ca4c5e8ec921a43e36d70069ea437caaca3aa3893cc200645fa85180da32b8dc2fe08761d69b62'
     'caa55ed27364ba194cd30c65f74588cd544e7a41593f26886db60092f718d1d665fe3090cac95cc5f057'
     'ff3597cb005dcf1c61ff4590e5005a59126b00569d'),
    ((4, 9, 3), (7, 13), 'AREA',
     '004992064f980c559e165fa81d66af236cb52c75be357ec73b84cd428bd44c95de529be458a1ea09529b'
     '125ba41b64ad2972bb337c9a3c858e48919a546ca65d66af6871ba589aaa5da6af66afb8256eb7367fc8'
     '468fd861aaf375be5c86cf189de62fb43646c50e57d9226b7daa0f7fc81190d9223881ca4d969863ac75'
     '87d099a1945da88d3a93dc25b23344c8115ae22b748fbb2196a628ac753e4a93dc65ae6980c912acf53e'
     'cd6b5fca4c5c89d21baf3141ca135ceb347da0cd32ad843fc8115a66af3889d237ace03ee46d76ccaa5e'
     'c6b358de6770c11853ce1760f9428bba3c4c793b61323b846fb80195de27bbe74df74089ccbf5ec5d557'
     'fa438cc71059d01962fd468fc30c5568236c004992'),
    ((7, 5, 3), (3, 4), 'NEAREST',
     '0049920b549d165fa8216ab34a93dc7bc40dacf53edd266f94dd26eb347dbd064f145da6'),
    ((7, 5, 3), (3, 4), 'LINEAR',
     '1b65ad3982cb57a07e74bd5c78c10acdb65fceb760f25b84b31c652e77c07f5da65d91da'),
    ((7, 5, 3), (3, 4), 'CUBIC',
     '1760ac347bf34cab7978c45975c107d7b369cac25cf25984b70467008fd599519a529de6'),
    ((7, 5, 3), (3, 4), 'AREA',
     '1f68aa3d86aa5a8d8669aa687db749bf9351ac806ac76f68ae406c4f73bc6c65ae6a80c9'),
    ((8, 8, 3), (4, 4), 'NEAREST',
     '004992165fa82c75be428bd44a93dcacf53e89d21beb347d94dd26bd064fe62f780f58a1de2770539ce5'
     '438cd5337cc5'),
    ((8, 8, 3), (4, 4), 'LINEAR',
     '1d66af468f986f78817780897ac34cce9760be4750cf5861976069723b846e77c0464f98535ca53780c9'
     '3a83cc3d86cf'),
    ((8, 8, 3), (4, 4), 'CUBIC',
     '1760b53d949b717883767f8873d639e99661ba3942e15e679b566d6421766f86cd354a935760a93289d2'
     '3a81ca4089d2'),
    ((8, 8, 3), (4, 4), 'AREA',
     '1d66af468f986f78817780897ac34cce9760be4750cf5861976069723b846e77c0464f98535ca53780c9'
     '3a83cc3d86cf'),
    ((3, 10, 1), (5, 6), 'NEAREST',
     '000b21374258000b2137425825437fbbd99025437fbbd9904a7bddbaebc8'),
    ((3, 10, 1), (5, 6), 'LINEAR',
     '0316283a4d5f153453725c7b2f6193c572a4498e9ec888cd5aaca5ca97e9'),
    ((3, 10, 1), (5, 6), 'CUBIC',
     '000f1e2d4959102e507459762d6192ce72a64994a3dc8bd65bb3a2d49bf3'),
    ((3, 10, 1), (5, 6), 'AREA',
     '0414283b4b5f132b4b6a5f75315b91c787a24f8aa2cb9dcf5ea2abcea8e5'),
]


def golden_image(h, w, c):
    vals = [[[(y * 37 + x * 11 + k * 73 + ((y * x) % 7) * 19) % 256 for k in range(c)]
             for x in range(w)] for y in range(h)]
    if c == 1:
        vals = [[px[0] for px in row] for row in vals]
    return np.array(vals, dtype=np.uint8)


class TestResizeAgainstOpenCV(unittest.TestCase):
    def test_recorded_cv2_outputs_bit_for_bit(self):
        for (h, w, c), (oh, ow), mode, hexed in CV_RESIZE:
            out = vision.Resize((oh, ow), getattr(Inter, mode))(golden_image(h, w, c))
            want = list(bytes.fromhex(hexed))
            self.assertEqual(flat(out), want, "%s %s -> %s" % (mode, (h, w, c), (oh, ow)))
            self.assertEqual(tuple(out.shape), (oh, ow, c) if c > 1 else (oh, ow))


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

    def test_mask_unique_order(self):
        a = np.array([3, 1, 3, 2], dtype=np.int32)
        self.assertEqual(transforms.Mask(transforms.Relational.GE, 2)(a).tolist(),
                         [True, False, True, True])
        self.assertEqual(str(transforms.Mask(transforms.Relational.EQ, 3, np.int32)(a).dtype), "int32")
        u, idx, cnt = transforms.Unique()(a)
        self.assertEqual((u.tolist(), idx.tolist(), cnt.tolist()), ([3, 1, 2], [0, 1, 0, 2], [2, 1, 1]))
        ds.config.set_seed(9)
        ro = transforms.RandomOrder([lambda x: x * 2, lambda x: x + 1])
        self.assertEqual({str(ro(a).tolist()) for _ in range(30)},
                         {"[7, 3, 7, 5]", "[8, 4, 8, 6]"})
        m = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
        self.assertEqual(transforms.Slice(Ellipsis, [0, 2])(m).tolist(), [[1, 3], [4, 6]])

    def test_random_apply_choice(self):
        ds.config.set_seed(5)
        a = np.array([1, 2], dtype=np.int32)
        ra = transforms.RandomApply([lambda x: x * 10], prob=0.5)
        outs = [ra(a).tolist() for _ in range(40)]
        self.assertEqual({str(o) for o in outs}, {"[1, 2]", "[10, 20]"})
        rc = transforms.RandomChoice([lambda x: x + 1, lambda x: x - 1])
        self.assertEqual({str(rc(a).tolist()) for _ in range(40)}, {"[2, 3]", "[0, 1]"})
        self.assertEqual(transforms.RandomApply([lambda x: x * 10], prob=1.0)(a).tolist(), [10, 20])


class TestDecode(unittest.TestCase):
    def test_decode_through_pillow_or_a_clear_error(self):
        try:
            from PIL import Image as PILImage
        except ImportError:
            PILImage = None
        vals, img = image(3, 5)
        if PILImage is None:
            data = np.array([137, 80, 78, 71, 13, 10, 26, 10], dtype=np.uint8)
            with self.assertRaisesRegex(NotImplementedError, "Decode: decoding JPEG/PNG/BMP needs an "
                                                             "image codec"):
                vision.Decode()(data)
            with self.assertRaisesRegex(NotImplementedError, "Pillow is not installed"):
                vision.RandomCropDecodeResize(4)(data)
            return
        import io
        buf = io.BytesIO()
        PILImage.frombytes("RGB", (5, 3), bytes(flat(vals))).save(buf, format="PNG")
        data = np.frombuffer(buf.getvalue(), dtype=np.uint8)
        out = vision.Decode()(data)
        self.assertEqual(str(out.dtype), "uint8")
        self.assertEqual(out.tolist(), vals)
        with self.assertRaisesRegex(RuntimeError, "Decode: image decode failed"):
            vision.Decode()(np.array([1, 2, 3], dtype=np.uint8))
        ds.config.set_seed(2)
        crop = vision.RandomCropDecodeResize((4, 6), scale=(1.0, 1.0), ratio=(5 / 3, 5 / 3))(data)
        self.assertEqual(crop.tolist(), vision.Resize((4, 6))(out).tolist())  # the whole image


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

    def test_kernel_refuses_inconsistent_calls(self):
        from pijit import _C
        _, img = image(4, 4)
        t = img if isinstance(img, _C.TensorBase) else _C.TensorBase(img)  # numpy_lite / numpy
        with self.assertRaisesRegex(ValueError, "normalize needs nmean >= 1"):
            _C.op("image_map", (t,), {"to_float": True, "normalize": True})
        with self.assertRaisesRegex(ValueError, "is too large"):
            _C.op("image_map", (t,), {"out_h": 2 ** 40, "out_w": 2 ** 40})
        with self.assertRaisesRegex(ValueError, "expected a float64 parameter vector of 3 values"):
            _C.op("image_map", (t,), {"nfill": 3})
        with self.assertRaisesRegex(RuntimeError, "Resize: the input value of 'resize' is invalid"):
            _C.op("image_resize", (t,), {"out_h": 0, "out_w": 3, "op": "Resize"})

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
