"""The data loader (issue 43), side by side in one run:

  transforms  the CIFAR-10 augmentation (RandomCrop(32, padding=4), RandomHorizontalFlip,
              Rescale(1/255), Normalize, HWC2CHW) on one 32x32x3 uint8 image: the transforms
              called one by one (what map does with a list) vs transforms.Compose (one fused
              kernel pass) vs numpy written by hand (system python3 only)
  loader      images/s through mindspore.dataset: GeneratorDataset over in-memory uint8 images,
              map(the augmentation), batch(128), one epoch of create_tuple_iterator, with 1 and 2
              workers, the list and the Compose; PyTorch's DataLoader over the same transforms
              written in torch ops (/usr/bin/python3; num_workers 0 (inline, as pijit's 1 worker)
              and 2)
  train       a small ResNet (stem + 3 residual stages, 16/32/64 channels, batch 128, 3x32x32),
              one jitted SGD step: steps/s on pre-made tensors vs fed by the loader (2 workers;
              the operations list and the Compose), and the share of each fed run spent waiting
              for the next batch (the loader keeps up when that is near 0; what remains of the
              gap is the loader's threads sharing the cores with the step)

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_loader.py [--threads N]
    PYTHONPATH=pyscripts /usr/bin/python3 pyscripts/bench/bench_loader.py   # with real numpy

Sections by name (transforms loader train). The stdlib Pythons run the pipeline on pijit's numpy
stand-in (numpy_lite); /usr/bin/python3 on numpy.
"""
import argparse
import os
import subprocess
import time

import pijit as pj
from pijit import nn
import pijit.dataset as ds
from pijit.dataset import transforms, vision
from pijit.dataset._compat import np, LITE

MEAN = [0.4914, 0.4822, 0.4465]
STD = [0.2023, 0.1994, 0.2010]
N_IMAGES = 10240
BATCH = 128


def augmentation():
    return [vision.RandomCrop(32, padding=4), vision.RandomHorizontalFlip(),
            vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(MEAN, STD), vision.HWC2CHW()]


def images(n):
    import random
    rng = random.Random(0)
    raw = bytes(rng.getrandbits(8) for _ in range(32 * 32 * 3 * 64))
    from pijit.dataset._compat import frombuffer
    pool = [frombuffer(bytearray(raw[i * 3072:(i + 1) * 3072]), np.uint8, (32, 32, 3))
            for i in range(64)]
    return [pool[i % 64] for i in range(n)]


def best_us(fn, n, repeat=5):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def bench_transforms():
    img = images(1)[0]
    ops = augmentation()
    fused = transforms.Compose(augmentation())

    def one_by_one():
        x = img
        for op in ops:
            x = op(x)
        return x
    t_list = best_us(one_by_one, 2000)
    t_fused = best_us(lambda: fused(img), 2000)
    print("transforms: the CIFAR-10 augmentation on one 32x32x3 uint8 image (%s)"
          % ("numpy_lite" if LITE else "numpy"))
    print("  one by one %.1f us, Compose (one fused pass) %.1f us: %.2fx faster"
          % (t_list, t_fused, t_list / t_fused))
    if not LITE:
        mean, std = np.float32(MEAN), np.float32(STD)

        def by_hand():
            p = np.zeros((40, 40, 3), np.uint8)
            p[4:36, 4:36] = img
            c = p[3:35, 5:37][:, ::-1]
            v = (c.astype(np.float32) * np.float32(1 / 255.) - mean) / std
            return np.ascontiguousarray(v.transpose(2, 0, 1))
        t_np = best_us(by_hand, 2000)
        print("  numpy by hand %.1f us: Compose is %.2fx its time" % (t_np, t_fused / t_np))


class Source:
    def __init__(self, n):
        self.imgs = images(n)
        self.labels = [np.array(i % 10, dtype=np.int32) for i in range(n)]

    def __getitem__(self, i):
        return self.imgs[i], self.labels[i]

    def __len__(self):
        return len(self.imgs)


def pipeline(workers, fused, n=N_IMAGES):
    d = ds.GeneratorDataset(Source(n), ["image", "label"], shuffle=True)
    ops = transforms.Compose(augmentation()) if fused else augmentation()
    d = d.map(ops, input_columns="image", num_parallel_workers=workers)
    return d.batch(BATCH, drop_remainder=True)


def loader_rate(workers, fused):
    d = pipeline(workers, fused)
    best = 0.0
    for _ in range(2):
        t = time.perf_counter()
        count = 0
        for img, _label in d.create_tuple_iterator(output_numpy=True, num_epochs=1):
            count += img.shape[0]
        best = max(best, count / (time.perf_counter() - t))
    return best


TORCH = """
import sys, time, torch
import torch.nn.functional as F
torch.set_num_threads(1)
workers, n, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
g = torch.Generator().manual_seed(0)
pool = torch.randint(0, 256, (64, 32, 32, 3), dtype=torch.uint8, generator=g)
mean = torch.tensor(%r).view(3, 1, 1)
std = torch.tensor(%r).view(3, 1, 1)
class Data(torch.utils.data.Dataset):
    def __len__(self): return n
    def __getitem__(self, i):
        img = pool[i %% 64].permute(2, 0, 1)                      # HWC2CHW (a view)
        p = F.pad(img, (4, 4, 4, 4))                               # RandomCrop(32, padding=4)
        y, x = torch.randint(0, 9, (2,)).tolist()
        c = p[:, y:y + 32, x:x + 32]
        if torch.rand(()) < 0.5:                                   # RandomHorizontalFlip
            c = c.flip(2)
        v = c.float() * (1.0 / 255.0)                              # Rescale
        return (v - mean) / std, i %% 10                           # Normalize
loader = torch.utils.data.DataLoader(Data(), batch_size=batch, shuffle=True, drop_last=True,
                                     num_workers=workers)
best = 0.0
for _ in range(2):
    t = time.perf_counter(); count = 0
    for xb, yb in loader: count += xb.shape[0]
    best = max(best, count / (time.perf_counter() - t))
print(best)
""" % (MEAN, STD)


def torch_rate(workers):
    if not os.path.exists("/usr/bin/python3"):
        return None
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", TORCH, str(workers), str(N_IMAGES),
                              str(BATCH)], capture_output=True, text=True, timeout=600)
        return float(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def bench_loader():
    print("loader: images/s, %d uint8 32x32x3 images, the augmentation, batch %d, one epoch (%s)"
          % (N_IMAGES, BATCH, "numpy_lite" if LITE else "numpy"))
    rates = {}
    for workers in (1, 2):
        for fused in (False, True):
            rates[workers, fused] = loader_rate(workers, fused)
    for workers, tw in ((1, 0), (2, 2)):
        t = torch_rate(tw)
        lst, fus = rates[workers, False], rates[workers, True]
        peer = ("PyTorch DataLoader (num_workers=%d) %.0f/s: pijit list %.2fx, Compose %.2fx"
                % (tw, t, lst / t, fus / t)) if t else "PyTorch not installed"
        print("  %d worker(s): operations list %.0f/s, Compose %.0f/s; %s" % (workers, lst, fus, peer))
    return rates


def resnet():
    class Block(nn.Cell):
        def __init__(self, a, b, stride):
            super().__init__()
            self.c1 = nn.Conv2d(a, b, 3, stride, pad_mode="pad", padding=1)
            self.b1 = nn.BatchNorm2d(b)
            self.c2 = nn.Conv2d(b, b, 3, 1, pad_mode="pad", padding=1)
            self.b2 = nn.BatchNorm2d(b)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or a != b:
                self.down = nn.SequentialCell([nn.Conv2d(a, b, 1, stride), nn.BatchNorm2d(b)])

        def construct(self, x):
            y = self.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            s = x if self.down is None else self.down(x)
            return self.relu(y + s)

    return nn.SequentialCell([nn.Conv2d(3, 16, 3, pad_mode="pad", padding=1), nn.BatchNorm2d(16),
                              nn.ReLU(), Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(64, 10)])


def bench_train(steps):
    pj.set_seed(0)
    net = resnet()
    net.set_train(True)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    step = pj.jit(nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), opt))
    batches = [(pj.randn(BATCH, 3, 32, 32), pj.randint(0, 10, (BATCH,)).astype(pj.int32))
               for _ in range(4)]
    for x, y in batches:
        step(x, y)
    t = time.perf_counter()
    for i in range(steps):
        step(*batches[i % 4])
    premade = steps / (time.perf_counter() - t)
    print("train: small ResNet, batch %d, one jitted SGD step (%d steps)" % (BATCH, steps))
    print("  pre-made tensors %.2f steps/s (%.0f images/s)" % (premade, premade * BATCH))
    for fused in (False, True):
        it = pipeline(2, fused, n=BATCH * (steps + 1)).create_tuple_iterator(num_epochs=1)
        x, y = next(it)
        step(x, y)
        t = time.perf_counter()
        done, waited = 0, 0.0
        while True:
            w = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            waited += time.perf_counter() - w
            step(x, y)
            done += 1
        total = time.perf_counter() - t
        fed = done / total
        print("  fed by the loader (2 workers, %s) %.2f steps/s: %.2fx the pre-made rate; the step "
              "waited for data %.1f%% of the time" % ("Compose" if fused else "operations list", fed,
                                                      fed / premade, 100 * waited / total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("only", nargs="*", help="transforms, loader and/or train (default: all)")
    args = ap.parse_args()
    pj.set_num_threads(args.threads)
    only = args.only or ["transforms", "loader", "train"]
    if "transforms" in only:
        bench_transforms()
    if "loader" in only:
        bench_loader()
    if "train" in only:
        bench_train(args.steps)


if __name__ == "__main__":
    main()
