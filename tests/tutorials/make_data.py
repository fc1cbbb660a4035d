"""Writes the tutorials' data sets locally, in the standard file formats, from a seeded pattern
(nothing is downloaded):

  mnist DIR   train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
              t10k-labels-idx1-ubyte: 28x28 uint8 digits drawn as seven-segment strokes at a
              jittered position and thickness, with speckle noise
  cifar DIR   data_batch_1.bin ... data_batch_5.bin, test_batch.bin: records of one label byte
              and 3072 image bytes (R, G, B planes of 32x32), a class-coloured shape on noise

    python make_data.py mnist DIR [--train N] [--test N]
    python make_data.py cifar DIR [--per-batch N] [--test N]

Plain Python (no numpy), so it runs on any interpreter, under pijit or not. The same arguments
write the same bytes.
"""
import argparse
import os
import random
import struct

# Seven segments as (row0, col0, row1, col1) boxes on a 20x12 cell: a, b, c, d, e, f, g.
_SEGMENTS = [(0, 0, 2, 12), (0, 10, 10, 12), (10, 10, 20, 12), (18, 0, 20, 12), (10, 0, 20, 2),
             (0, 0, 10, 2), (9, 0, 11, 12)]
_DIGITS = ["abcdef", "bc", "abged", "abgcd", "fgbc", "afgcd", "afgedc", "abc", "abcdefg", "abcdfg"]


def _digit(label, rng):
    img = bytearray(28 * 28)
    top, left = 4 + rng.randint(-2, 2), 8 + rng.randint(-2, 2)
    grow = rng.randint(0, 1)  # a thicker stroke on some images
    for seg in _DIGITS[label]:
        r0, c0, r1, c1 = _SEGMENTS[ord(seg) - ord("a")]
        for r in range(max(0, top + r0 - grow), min(28, top + r1 + grow)):
            base = r * 28
            for c in range(max(0, left + c0 - grow), min(28, left + c1 + grow)):
                img[base + c] = 160 + rng.randint(0, 95)
    for _ in range(30):  # speckle
        img[rng.randrange(784)] = rng.randint(0, 255)
    return bytes(img)


def make_mnist(directory, n_train=4000, n_test=1000, seed=0):
    """Writes the four MNIST files into directory; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = [rng.randrange(10) for _ in range(n)]
        images = b"".join(_digit(k, rng) for k in labels)
        p_img = os.path.join(directory, prefix + "-images-idx3-ubyte")
        p_lab = os.path.join(directory, prefix + "-labels-idx1-ubyte")
        with open(p_img, "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images)
        with open(p_lab, "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(labels))
        paths += [p_img, p_lab]
    return paths


_COLOURS = [(220, 40, 40), (40, 200, 40), (40, 60, 220), (220, 220, 40), (200, 40, 200),
            (40, 200, 200), (240, 140, 30), (120, 120, 120), (250, 250, 250), (90, 50, 20)]


def _cifar_record(label, rng):
    colour = _COLOURS[label]
    # shape by class parity: a square for even classes, a horizontal band for odd ones
    r0 = rng.randint(4, 12)
    c0 = rng.randint(4, 12)
    r1, c1 = (r0 + 16, c0 + 16) if label % 2 == 0 else (r0 + 8, 30)
    planes = []
    for ch in range(3):
        plane = bytearray(rng.getrandbits(6) for _ in range(1024))  # dark noise 0..63
        v = colour[ch]
        for r in range(r0, min(32, r1)):
            for c in range(c0, min(32, c1)):
                plane[r * 32 + c] = max(0, min(255, v + rng.randint(-20, 20)))
        planes.append(bytes(plane))
    return bytes([label]) + b"".join(planes)


def make_cifar(directory, per_batch=1000, n_test=500, seed=0):
    """Writes data_batch_1..5.bin and test_batch.bin into directory; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    names = ["data_batch_%d.bin" % i for i in range(1, 6)] + ["test_batch.bin"]
    for name in names:
        n = n_test if name == "test_batch.bin" else per_batch
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(b"".join(_cifar_record(rng.randrange(10), rng) for _ in range(n)))
        paths.append(path)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["mnist", "cifar"])
    ap.add_argument("directory")
    ap.add_argument("--train", type=int, default=4000, help="MNIST training images")
    ap.add_argument("--per-batch", type=int, default=1000, help="CIFAR records per data_batch file")
    ap.add_argument("--test", type=int, default=None, help="test images")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.kind == "mnist":
        paths = make_mnist(a.directory, a.train, 1000 if a.test is None else a.test, a.seed)
    else:
        paths = make_cifar(a.directory, a.per_batch, 500 if a.test is None else a.test, a.seed)
    for p in paths:
        print(p)


if __name__ == "__main__":
    main()
