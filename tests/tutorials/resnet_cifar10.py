"""Image classification on CIFAR-10 (binary file format) with a small ResNet: augmentation in the
data pipeline (random crop with padding, random flip, rescale, normalise, HWC to CHW), BatchNorm,
Momentum with a cosine learning-rate schedule, Model.train with LossMonitor and ModelCheckpoint,
then Model.eval on test_batch.bin.

The data is written locally by make_data.py into --data-dir when the files are not there yet.

    python -m pijit run resnet_cifar10.py [--epochs N] [--batch-size N] [--workers N]

TUTORIAL_SIZE=small shrinks the data so a run takes seconds (the tests use it).
"""
import argparse
import os

import mindspore
from mindspore import nn
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms
from mindspore.train import Model, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig

import make_data

SMALL = os.environ.get("TUTORIAL_SIZE", "") == "small"
MEAN = [0.4914, 0.4822, 0.4465]
STD = [0.2023, 0.1994, 0.2010]


def create_dataset(data_dir, usage, batch_size, workers=1, shuffle=None):
    """Cifar10Dataset -> (train: crop + flip) -> rescale, normalise, CHW -> int32 labels -> batches."""
    train = usage == "train"
    data = ds.Cifar10Dataset(data_dir, usage=usage, shuffle=train if shuffle is None else shuffle)
    ops = []
    if train:
        ops += [vision.RandomCrop((32, 32), (4, 4, 4, 4)), vision.RandomHorizontalFlip(prob=0.5)]
    ops += [vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()]
    data = data.map(operations=ops, input_columns="image", num_parallel_workers=workers)
    data = data.map(operations=transforms.TypeCast(mindspore.int32), input_columns="label")
    return data.batch(batch_size, drop_remainder=train)


class ResidualBlock(nn.Cell):
    def __init__(self, in_channel, out_channel, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, out_channel, 3, stride, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(out_channel)
        self.conv2 = nn.Conv2d(out_channel, out_channel, 3, 1, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = None
        if stride != 1 or in_channel != out_channel:
            self.down_sample = nn.SequentialCell([nn.Conv2d(in_channel, out_channel, 1, stride),
                                                  nn.BatchNorm2d(out_channel)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.down_sample is not None:
            identity = self.down_sample(x)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    """A stem and three stages of one residual block each (16, 32, 64 channels)."""

    def __init__(self, num_classes=10, widths=(16, 32, 64)):
        super().__init__()
        self.stem = nn.SequentialCell([nn.Conv2d(3, widths[0], 3, pad_mode="pad", padding=1),
                                       nn.BatchNorm2d(widths[0]), nn.ReLU()])
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks.append(ResidualBlock(c, w, 1 if i == 0 else 2))
            c = w
        self.layers = nn.SequentialCell(blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(c, num_classes)

    def construct(self, x):
        x = self.layers(self.stem(x))
        return self.fc(self.flatten(self.pool(x)))


def main():
    ap = argparse.ArgumentParser(description="CIFAR-10 ResNet")
    ap.add_argument("--data-dir", default="./cifar-10-batches-bin")
    ap.add_argument("--ckpt-dir", default="./checkpoints")
    ap.add_argument("--epochs", type=int, default=2 if SMALL else 5)
    ap.add_argument("--batch-size", type=int, default=16 if SMALL else 128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--print-every", type=int, default=1 if SMALL else 10)
    args = ap.parse_args()

    if not os.path.exists(os.path.join(args.data_dir, "data_batch_1.bin")):
        per_batch, n_test = (32, 32) if SMALL else (1000, 500)
        make_data.make_cifar(args.data_dir, per_batch, n_test)

    mindspore.set_seed(args.seed)
    train_set = create_dataset(args.data_dir, "train", args.batch_size, args.workers)
    test_set = create_dataset(args.data_dir, "test", args.batch_size, args.workers)
    step_size = train_set.get_dataset_size()

    net = ResNet()
    os.makedirs(args.ckpt_dir, exist_ok=True)
    mindspore.save_checkpoint(net, os.path.join(args.ckpt_dir, "init.ckpt"))
    lr = nn.cosine_decay_lr(min_lr=0.0, max_lr=args.lr, total_step=args.epochs * step_size,
                            step_per_epoch=step_size, decay_epoch=args.epochs)
    opt = nn.Momentum(params=net.trainable_params(), learning_rate=lr, momentum=0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={"accuracy"})

    config = CheckpointConfig(save_checkpoint_steps=step_size, keep_checkpoint_max=2)
    ckpt = ModelCheckpoint(prefix="resnet_cifar10", directory=args.ckpt_dir, config=config)
    model.train(args.epochs, train_set, callbacks=[LossMonitor(args.print_every), TimeMonitor(), ckpt])
    acc = model.eval(test_set)
    print("Model.eval: accuracy %.4f" % acc["accuracy"])


if __name__ == "__main__":
    main()
