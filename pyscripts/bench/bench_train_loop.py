"""The CIFAR-10 ResNet tutorial's training loop (tests/tutorials/resnet_cifar10.py: its network,
data pipeline, Momentum with the cosine schedule, Model.train), timed three ways on the same
batches of 128:

  loader      images/s of the tutorial's pipeline alone (Cifar10Dataset from data_batch_*.bin,
              RandomCrop(32, padding 4), RandomHorizontalFlip, Rescale, Normalize, HWC2CHW,
              TypeCast, batch 128), one epoch, 1 and 2 map workers
  Model.train step time fed by that pipeline (1 and 2 workers) against Model.train over the same
              number of pre-made Tensor batches (a list: no loader at all), and the jitted
              TrainOneStepCell called directly on pre-made Tensors (no Model, no callbacks);
              the first epoch (compiles) is left out, the time is the mean of the later epochs;
              the share of a fed step spent waiting for its batch says whether the loader keeps up
              (near 0: it does, and what remains of the gap is its threads sharing the cores)

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_train_loop.py [--steps N] [--epochs N]
    PYTHONPATH=pyscripts /usr/bin/python3 pyscripts/bench/bench_train_loop.py   # with real numpy

The data is written by tests/tutorials/make_data.py into a temporary directory.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "tutorials"))

from pijit import alias  # noqa: E402

alias.install_mindspore_alias()  # the tutorial imports mindspore
import pijit as pj  # noqa: E402
from pijit import nn  # noqa: E402
from pijit.train import Model, Callback  # noqa: E402
from pijit.dataset._compat import LITE  # noqa: E402
import make_data  # noqa: E402
import resnet_cifar10 as tutorial  # noqa: E402

BATCH = 128


class StepTimes(Callback):
    """Wall time of each epoch after the first (the first compiles), and the part of it between
    one step's end and the next one's begin (Model waiting for the next batch)."""

    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_train_epoch_begin(self, run_context):
        self.t = self.last = time.perf_counter()
        self.wait = 0.0

    def on_train_step_begin(self, run_context):
        self.wait += time.perf_counter() - self.last

    def on_train_step_end(self, run_context):
        self.last = time.perf_counter()

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        self.epochs.append((time.perf_counter() - self.t, cb.batch_num, self.wait))

    def per_step(self):
        later = self.epochs[1:] or self.epochs
        return sum(e[0] for e in later) / sum(e[1] for e in later)

    def waited(self):
        later = self.epochs[1:] or self.epochs
        return sum(e[2] for e in later) / sum(e[0] for e in later)


class Premade:
    """Pre-made Tensor batches in a list, read the way Model reads a dataset."""

    def __init__(self, batches):
        self.batches = batches

    def get_dataset_size(self):
        return len(self.batches)

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        return iter(self.batches)


def model_for(steps, epochs):
    pj.set_seed(1)
    net = tutorial.ResNet()
    lr = nn.cosine_decay_lr(0.0, 0.1, epochs * steps, steps, epochs)
    opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, opt, loss, Model(net, loss_fn=loss, optimizer=opt, metrics={"accuracy"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8, help="steps per epoch (batches of 128)")
    ap.add_argument("--epochs", type=int, default=3, help="epochs per run (the first is left out)")
    ap.add_argument("--threads", type=int, default=None, help="pijit's compute threads")
    a = ap.parse_args()
    if a.threads:
        pj._C.set_num_threads(a.threads)
    tmp = tempfile.mkdtemp(prefix="pijit-bench-train-loop-")
    try:
        per_file = -(-a.steps * BATCH // 5)
        make_data.make_cifar(tmp, per_file, 16)
        print("CIFAR-10 ResNet tutorial, batch %d, %d steps an epoch, %d epochs (%s, %d compute threads)"
              % (BATCH, a.steps, a.epochs, "numpy_lite" if LITE else "numpy", pj._C.get_num_threads()))

        def pipeline(workers):
            return tutorial.create_dataset(tmp, "train", BATCH, workers).take(a.steps)

        for workers in (1, 2):
            best = 0.0
            for _ in range(2):
                t = time.perf_counter()
                n = sum(x.shape[0] for x, _ in pipeline(workers).create_tuple_iterator(num_epochs=1,
                                                                                       output_numpy=True))
                best = max(best, n / (time.perf_counter() - t))
            print("  loader alone, %d worker(s): %.0f images/s (%.1f ms a batch)"
                  % (workers, best, 1000.0 * BATCH / best))

        rows = {}
        for workers in (1, 2):
            _, _, _, model = model_for(a.steps, a.epochs)
            rec = StepTimes()
            model.train(a.epochs, pipeline(workers), callbacks=[rec])
            rows["loader %d" % workers] = rec.per_step()
            rows["wait %d" % workers] = rec.waited()
        batches = [tuple(b) for b in pipeline(2).create_tuple_iterator(num_epochs=1)]
        _, _, _, model = model_for(a.steps, a.epochs)
        rec = StepTimes()
        model.train(a.epochs, Premade(batches), callbacks=[rec])
        rows["premade"] = rec.per_step()

        net, opt, loss, _ = model_for(a.steps, a.epochs)
        net.set_train(True)
        step = pj.jit(nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt))
        for x, y in batches[:2]:
            step(x, y)
        t = time.perf_counter()
        for _ in range(a.epochs - 1):
            for x, y in batches:
                step(x, y)
        rows["direct"] = (time.perf_counter() - t) / ((a.epochs - 1) * len(batches))

        base = rows["premade"]
        print("  Model.train, pre-made Tensor batches: %.1f ms a step (%.0f images/s)"
              % (1000 * base, BATCH / base))
        for workers in (1, 2):
            v = rows["loader %d" % workers]
            print("  Model.train fed by the pipeline, %d worker(s): %.1f ms a step (%.0f images/s), %.2fx the "
                  "pre-made step time; waiting for the next batch %.1f%% of it"
                  % (workers, 1000 * v, BATCH / v, v / base, 100 * rows["wait %d" % workers]))
        d = rows["direct"]
        print("  the jitted TrainOneStepCell called directly on pre-made Tensors: %.1f ms a step (%.0f images/s); "
              "Model.train adds %.1f%%" % (1000 * d, BATCH / d, 100 * (base / d - 1)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
