"""mindspore.dataset: MnistDataset and Cifar10Dataset on files written here in the standard
formats, the worker pools (threads and forked processes), and the errors a broken file, a raising
worker or a dying worker process give (each names the dataset, operation or file; none hangs).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import unittest

import pijit.dataset as ds
from pijit.dataset import config, _parallel
from pijit.dataset._compat import np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_mnist(d, prefix, n, rows=28, cols=28):
    """n images whose pixel (r, c) is (k + r + c) % 256 and labels k % 10."""
    pix = bytes((k + r + c) % 256 for k in range(n) for r in range(rows) for c in range(cols))
    with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, rows, cols) + pix)
    with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + bytes(k % 10 for k in range(n)))


def write_cifar(d, name, n, first_label=0):
    """n records: label (first_label + k) % 10, channel ch of pixel (r, c) = (k + ch*7 + r) % 256."""
    out = bytearray()
    for k in range(n):
        out.append((first_label + k) % 10)
        for ch in range(3):
            out += bytes((k + ch * 7 + r) % 256 for r in range(32) for _ in range(32))
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(out))


def rows(d):
    return [[a.tolist() for a in r]
            for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]


class Files(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pijit_ds_")
        cls.mnist = os.path.join(cls.dir, "mnist")
        cls.cifar = os.path.join(cls.dir, "cifar")
        os.makedirs(cls.mnist)
        os.makedirs(cls.cifar)
        write_mnist(cls.mnist, "train", 12)
        write_mnist(cls.mnist, "t10k", 5)
        for i in range(1, 6):
            write_cifar(cls.cifar, "data_batch_%d.bin" % i, 2, first_label=i)
        write_cifar(cls.cifar, "test_batch.bin", 3)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_mnist(self):
        d = ds.MnistDataset(self.mnist, usage="train", shuffle=False)
        self.assertEqual(d.get_col_names(), ["image", "label"])
        self.assertEqual(d.get_dataset_size(), 12)
        got = list(d.create_tuple_iterator(num_epochs=1, output_numpy=True))
        img, label = got[3]
        self.assertEqual(img.shape, (28, 28, 1))
        self.assertEqual(str(img.dtype), "uint8")
        self.assertEqual(str(label.dtype), "int32" if _lite() else "uint32")
        self.assertEqual(int(label), 3)
        self.assertEqual(int(img[2, 5, 0]), 3 + 2 + 5)
        self.assertEqual(ds.MnistDataset(self.mnist, usage="test").get_dataset_size(), 5)
        self.assertEqual(ds.MnistDataset(self.mnist).get_dataset_size(), 17)  # usage all
        d = ds.MnistDataset(self.mnist, usage="test", shuffle=False, num_samples=2)
        self.assertEqual([r[1] for r in rows(d)], [0, 1])
        config.set_seed(2)
        labels = [r[1] for r in rows(ds.MnistDataset(self.mnist, usage="train"))]
        self.assertEqual(sorted(labels), sorted(k % 10 for k in range(12)))
        b = ds.MnistDataset(self.mnist, "train", shuffle=False).batch(5, drop_remainder=True)
        shapes = [r[0].shape for r in b.create_tuple_iterator(num_epochs=1)]
        self.assertEqual(shapes, [(5, 28, 28, 1), (5, 28, 28, 1)])

    def test_cifar10(self):
        d = ds.Cifar10Dataset(self.cifar, usage="train", shuffle=False)
        self.assertEqual(d.get_dataset_size(), 10)
        got = list(d.create_tuple_iterator(num_epochs=1, output_numpy=True))
        img, label = got[3]  # file data_batch_2.bin, record 1
        self.assertEqual(img.shape, (32, 32, 3))
        self.assertEqual(int(label), (2 + 1) % 10)
        self.assertEqual([int(v) for v in img[4, 9]], [(1 + 4) % 256, (1 + 7 + 4) % 256,
                                                       (1 + 14 + 4) % 256])  # HWC from planes
        self.assertEqual(ds.Cifar10Dataset(self.cifar, usage="test").get_dataset_size(), 3)
        self.assertEqual(ds.Cifar10Dataset(self.cifar, usage="all").get_dataset_size(), 13)
        s = ds.Cifar10Dataset(self.cifar, usage="train", num_shards=2, shard_id=1, shuffle=False)
        self.assertEqual([r[1] for r in rows(s)], [2, 3, 4, 5, 6])

    def test_missing_and_broken_files(self):
        with tempfile.TemporaryDirectory() as d:
            write_mnist(d, "train", 2)
            with self.assertRaises(RuntimeError) as cm:
                ds.MnistDataset(d, usage="all")
            msg = str(cm.exception)
            self.assertIn("t10k-images-idx3-ubyte", msg)
            self.assertIn("t10k-labels-idx1-ubyte", msg)
            self.assertIn("nothing is downloaded", msg)
            path = os.path.join(d, "train-images-idx3-ubyte")
            with open(path, "r+b") as f:
                f.truncate(16 + 28 * 28 + 10)
            with self.assertRaisesRegex(RuntimeError, "train-images-idx3-ubyte is truncated"):
                ds.MnistDataset(d, usage="train").get_dataset_size()
            with open(path, "r+b") as f:
                f.write(struct.pack(">I", 1234))
            with self.assertRaisesRegex(RuntimeError, "train-images-idx3-ubyte is not an MNIST"):
                rows(ds.MnistDataset(d, usage="train"))
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(RuntimeError, "data_batch_1.bin.*test_batch.bin"):
                ds.Cifar10Dataset(d)
            write_cifar(d, "test_batch.bin", 2)
            with open(os.path.join(d, "test_batch.bin"), "ab") as f:
                f.write(b"xx")
            with self.assertRaisesRegex(RuntimeError, "test_batch.bin is truncated or corrupt"):
                ds.Cifar10Dataset(d, usage="test").get_dataset_size()
        with self.assertRaisesRegex(ValueError, "does not exist or is not a directory"):
            ds.MnistDataset(os.path.join(self.dir, "nowhere"))
        with self.assertRaisesRegex(ValueError, "Input usage is not within the valid set"):
            ds.MnistDataset(self.mnist, usage="val")


def _lite():
    return bool(getattr(np, "__pijit_numpy_lite__", False))


def _fork():
    return _parallel.fork_available()


class Workers(unittest.TestCase):
    def src(self, n, **kw):
        return ds.GeneratorDataset([(np.array(i),) for i in range(n)], ["c"], shuffle=False, **kw)

    def test_parallel_source_and_map_keep_order(self):
        for mp in (False, True):
            d = self.src(30, num_parallel_workers=2, python_multiprocessing=mp)
            d = d.map(lambda c: c * 2, input_columns="c", num_parallel_workers=2,
                      python_multiprocessing=mp).batch(7)
            self.assertEqual([r[0] for r in rows(d)],
                             [[2 * i for i in range(k, min(k + 7, 30))] for k in range(0, 30, 7)])

    def test_worker_error_names_operation_and_column(self):
        def boom(c):
            if int(c) == 5:
                raise ValueError("bad row 5")
            return c
        for mp in (False, True):
            d = self.src(10).map(boom, input_columns="c", num_parallel_workers=2,
                                 python_multiprocessing=mp)
            with self.assertRaises(RuntimeError) as cm:
                rows(d)
            self.assertIn("map operation [boom] on input_columns ['c']", str(cm.exception))
            self.assertIn("bad row 5", str(cm.exception))

    @unittest.skipUnless(_fork(), "worker processes need fork")
    def test_dying_worker_process_is_an_error_not_a_hang(self):
        def die(c):
            if int(c) == 3:
                os._exit(7)
            return c
        d = self.src(10).map(die, input_columns="c", num_parallel_workers=2,
                             python_multiprocessing=True)
        with self.assertRaisesRegex(RuntimeError, r"worker process of map operation \[die\].*"
                                                  r"died unexpectedly"):
            rows(d)

    def test_source_worker_error(self):
        class Src:
            def __getitem__(self, i):
                if i == 4:
                    raise IndexError("row 4 unreadable")
                return np.array(i)

            def __len__(self):
                return 8
        d = ds.GeneratorDataset(Src(), ["c"], shuffle=False, num_parallel_workers=2,
                                python_multiprocessing=False)
        with self.assertRaisesRegex(RuntimeError, "GeneratorDataset's source raised IndexError: "
                                                  "row 4 unreadable"):
            rows(d)

    def test_same_seed_same_order_in_a_new_process(self):
        prog = textwrap.dedent("""
            import pijit.dataset as ds
            ds.config.set_seed(1234)
            d = ds.GeneratorDataset(list(range(50)), "c").shuffle(10).batch(5)
            print([r[0].tolist() for r in d.create_tuple_iterator(num_epochs=1,
                                                                  output_numpy=True)])
        """)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        env.pop("PIJIT_STRESS", None)
        outs = [subprocess.run([sys.executable, "-c", prog], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120).stdout for _ in range(2)]
        self.assertEqual(outs[0], outs[1])
        self.assertIn(b"[[", outs[0])


if __name__ == "__main__":
    unittest.main()
