"""Quick start: classify handwritten-digit images (MNIST file format) with mindspore.dataset and
mindspore.train.Model, then the same training as a hand-written loop over the dataset.

The data is written locally by make_data.py into --data-dir when the files are not there yet.

    python -m pijit run quickstart.py                       # Model.train + eval, then the loop
    python -m pijit run quickstart.py --net lenet --epochs 3
    python -m pijit run quickstart.py --loop model          # only Model.train (--loop functional: only the loop)

TUTORIAL_SIZE=small shrinks the data and the network so a run takes seconds (the tests use it).
"""
import argparse
import os

import mindspore
from mindspore import nn
from mindspore.dataset import MnistDataset, vision, transforms
from mindspore.train import Model, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig

import make_data

SMALL = os.environ.get("TUTORIAL_SIZE", "") == "small"


def prepare_data(data_dir):
    if not os.path.exists(os.path.join(data_dir, "train-images-idx3-ubyte")):
        n_train, n_test = (256, 128) if SMALL else (4000, 1000)
        make_data.make_mnist(data_dir, n_train, n_test)


def datapipe(data_dir, usage, batch_size, num_samples=None):
    """MNIST -> [0, 1] floats -> normalised -> CHW, int32 labels -> batches. The order is the
    file's (shuffle=False), so every run sees the same batches."""
    dataset = MnistDataset(data_dir, usage=usage, shuffle=False, num_samples=num_samples)
    image_ops = [
        vision.Rescale(1.0 / 255.0, 0.0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW(),
    ]
    dataset = dataset.map(operations=image_ops, input_columns="image")
    dataset = dataset.map(operations=transforms.TypeCast(mindspore.int32), input_columns="label")
    return dataset.batch(batch_size)


class MLP(nn.Cell):
    def __init__(self, hidden):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layers = nn.SequentialCell(
            nn.Dense(28 * 28, hidden), nn.ReLU(),
            nn.Dense(hidden, hidden), nn.ReLU(),
            nn.Dense(hidden, 10))

    def construct(self, x):
        return self.layers(self.flatten(x))


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 4 * 4, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def build_network(kind, hidden):
    return LeNet5() if kind == "lenet" else MLP(hidden)


def train_with_model(args, train_set, test_set):
    mindspore.set_seed(args.seed)
    net = build_network(args.net, args.hidden)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    # the starting weights, so a run can be replayed elsewhere from the same point
    mindspore.save_checkpoint(net, os.path.join(args.ckpt_dir, "init.ckpt"))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=args.lr)
    model = Model(net, loss_fn=loss_fn, optimizer=optimizer, metrics={"accuracy"})

    steps = train_set.get_dataset_size()
    config = CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=args.epochs)
    callbacks = [ModelCheckpoint(prefix="mnist", directory=args.ckpt_dir, config=config)]
    if not args.progress:  # the progress bar shows when no callback prints lines
        callbacks = [LossMonitor(args.print_every), TimeMonitor()] + callbacks
    model.train(args.epochs, train_set, callbacks=callbacks)
    result = model.eval(test_set)
    print("Model.eval: accuracy %.4f" % result["accuracy"])
    return net


def train_functional(args, train_set, test_set):
    mindspore.set_seed(args.seed)
    model = build_network(args.net, args.hidden)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), learning_rate=args.lr)

    def forward_fn(data, label):
        logits = model(data)
        return loss_fn(logits, label), logits

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    def train_epoch(epoch):
        size = train_set.get_dataset_size()
        model.set_train()
        for batch, (data, label) in enumerate(train_set.create_tuple_iterator()):
            loss = train_step(data, label)
            if batch % args.print_every == 0:
                print(f"epoch {epoch} loss: {loss.asnumpy():>7f}  [{batch:>3d}/{size:>3d}]")

    def test():
        model.set_train(False)
        total, correct = 0, 0
        for data, label in test_set.create_tuple_iterator():
            pred = model(data)
            total += len(data)
            correct += int((pred.argmax(1) == label).asnumpy().sum())
        return correct / total

    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch)
        print(f"functional loop: epoch {epoch} test accuracy {test():.4f}")


def main():
    ap = argparse.ArgumentParser(description="MNIST quick start")
    ap.add_argument("--data-dir", default="./MNIST_Data")
    ap.add_argument("--ckpt-dir", default="./checkpoints")
    ap.add_argument("--net", choices=["mlp", "lenet"], default="mlp")
    ap.add_argument("--hidden", type=int, default=16 if SMALL else 512)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1 if SMALL else 1e-2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--print-every", type=int, default=1 if SMALL else 20)
    ap.add_argument("--loop", choices=["both", "model", "functional"], default="both")
    ap.add_argument("--progress", action="store_true",
                    help="no LossMonitor/TimeMonitor, so Model draws its progress bar on a terminal")
    args = ap.parse_args()

    prepare_data(args.data_dir)
    train_set = datapipe(args.data_dir, "train", args.batch_size)
    test_set = datapipe(args.data_dir, "test", args.batch_size)
    if args.loop in ("both", "model"):
        train_with_model(args, train_set, test_set)
    if args.loop in ("both", "functional"):
        train_functional(args, train_set, test_set)


if __name__ == "__main__":
    main()
