"""MnistDataset and Cifar10Dataset: the standard binary files, read from a local directory.

Nothing is downloaded: a missing file is an error naming the files the directory needs, and a
file whose header or length is not the format's is an error naming that file.
  MNIST: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
         t10k-labels-idx1-ubyte (idx: big-endian magic 2051/2049, counts, rows, cols).
  CIFAR-10: data_batch_1.bin .. data_batch_5.bin, test_batch.bin (records of 1 label byte and
         3072 pixel bytes, the red, green and blue 32x32 planes).
Columns: "image" (uint8, HWC: 28x28x1 / 32x32x3) and "label" (uint32; int32 under pijit's numpy
stand-in, which has no uint32). The files are read once, when first iterated or sized.
"""
import os
import struct
import threading

from pijit._state import runtime_state
from pijit.dataset import _validators as _v
from pijit.dataset._compat import np, frombuffer, label_dtype
from pijit.dataset.sources import MappableSource

__all__ = ["MnistDataset", "Cifar10Dataset"]

_MNIST = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_CIFAR10 = {"train": ["data_batch_%d.bin" % i for i in range(1, 6)], "test": ["test_batch.bin"]}


def _read(path):
    with open(path, "rb") as f:
        return bytearray(f.read())


class _FileSource(MappableSource):
    def __init__(self, dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler,
                 num_shards, shard_id, cache):
        _v.check_dir(dataset_dir)
        if usage is not None:
            _v.check_valid_str(usage, ["train", "test", "all"], "usage")
        for name, val in (("num_samples", num_samples), ("num_shards", num_shards),
                          ("shard_id", shard_id)):
            if val is not None:
                _v.type_check(val, (int,), name)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards,
                         shard_id)
        self.dataset_dir = dataset_dir
        self.usage = usage or "all"
        self._data = None
        self._lock = threading.Lock()
        self._files = self._expected()
        missing = [f for f in self._files if not os.path.isfile(os.path.join(dataset_dir, f))]
        if missing:
            raise RuntimeError(
                "Invalid data, %s(usage='%s') found no %s in %s: it reads %s from a local "
                "directory (nothing is downloaded)." % (
                    self._dataset_name, self.usage, ", ".join(missing), dataset_dir,
                    ", ".join(self._files)))

    def get_col_names(self):
        return ["image", "label"]

    @runtime_state("reads a dataset file")
    def _loaded(self):
        with self._lock:
            if self._data is None:
                self._data = self._load()
            return self._data

    def _len(self):
        return self._loaded()[0].shape[0]

    def _row(self, i):
        images, labels = self._loaded()
        return (images[i], labels[i])


class MnistDataset(_FileSource):
    _dataset_name = "MnistDataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler,
                         num_shards, shard_id, cache)

    def _expected(self):
        parts = ["train", "test"] if self.usage == "all" else [self.usage]
        return [f for p in parts for f in _MNIST[p]]

    def _load(self):
        parts = ["train", "test"] if self.usage == "all" else [self.usage]
        images, labels = [], []
        for p in parts:
            img_file, lbl_file = (os.path.join(self.dataset_dir, f) for f in _MNIST[p])
            img, lbl = _read(img_file), _read(lbl_file)
            if len(img) < 16 or struct.unpack(">I", bytes(img[:4]))[0] != 2051:
                raise RuntimeError("Invalid file, %s is not an MNIST image file (idx3: magic "
                                   "number 2051 and a 16-byte header expected)." % img_file)
            if len(lbl) < 8 or struct.unpack(">I", bytes(lbl[:4]))[0] != 2049:
                raise RuntimeError("Invalid file, %s is not an MNIST label file (idx1: magic "
                                   "number 2049 and an 8-byte header expected)." % lbl_file)
            n, rows, cols = struct.unpack(">III", bytes(img[4:16]))
            nl = struct.unpack(">I", bytes(lbl[4:8]))[0]
            if len(img) - 16 != n * rows * cols:
                raise RuntimeError("Invalid file, %s is truncated or corrupt: its header says %d "
                                   "images of %dx%d (%d bytes) but it holds %d bytes of pixels."
                                   % (img_file, n, rows, cols, n * rows * cols, len(img) - 16))
            if len(lbl) - 8 != nl:
                raise RuntimeError("Invalid file, %s is truncated or corrupt: its header says %d "
                                   "labels but it holds %d." % (lbl_file, nl, len(lbl) - 8))
            if n != nl:
                raise RuntimeError("Invalid data, the number of images in %s (%d) does not equal "
                                   "the number of labels in %s (%d)." % (img_file, n, lbl_file, nl))
            images.append(frombuffer(img[16:], np.uint8, (n, rows, cols, 1)))
            labels.append(frombuffer(lbl[8:], np.uint8, (n,)).astype(label_dtype()))
        if len(images) == 1:
            return images[0], labels[0]
        return np.concatenate(images), np.concatenate(labels)


class Cifar10Dataset(_FileSource):
    _dataset_name = "Cifar10Dataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler,
                         num_shards, shard_id, cache)

    def _expected(self):
        parts = ["train", "test"] if self.usage == "all" else [self.usage]
        return [f for p in parts for f in _CIFAR10[p]]

    def _load(self):
        images, labels = [], []
        for f in self._files:
            path = os.path.join(self.dataset_dir, f)
            raw = _read(path)
            if not raw or len(raw) % 3073:
                raise RuntimeError("Invalid file, %s is truncated or corrupt: a CIFAR-10 binary "
                                   "file holds records of 3073 bytes (1 label, 3072 pixels), but "
                                   "it has %d bytes." % (path, len(raw)))
            n = len(raw) // 3073
            rec = frombuffer(raw, np.uint8, (n, 3073))
            lab = rec[:, 0]
            if int(lab.max()) > 9:
                raise RuntimeError("Invalid file, %s is corrupt: label %d is outside CIFAR-10's "
                                   "0..9." % (path, int(lab.max())))
            labels.append(lab.astype(label_dtype()))
            images.append(np.ascontiguousarray(
                rec[:, 1:].reshape(n, 3, 32, 32).transpose(0, 2, 3, 1)))
        if len(images) == 1:
            return images[0], labels[0]
        return np.concatenate(images), np.concatenate(labels)
