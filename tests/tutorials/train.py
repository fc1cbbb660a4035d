"""train.py in the shape of a model-zoo entry: argparse, a config dict, set_context, a dataset
built by GeneratorDataset from a random-access source (a CSV file read row by row), a network
wrapped in WithLossCell and TrainOneStepCell, a custom callback, checkpoints, and an evaluation of
the last checkpoint loaded into a fresh network.

    python -m pijit run train.py [--device_target CPU] [--mode graph|pynative] [--epoch_size N]
                                 [--data_path data.csv] [--ckpt_path ./ckpt] [--num_workers N]

The CSV (eight feature columns and a label column, three classes) is written next to --data_path
when it is missing. TUTORIAL_SIZE=small shrinks it so a run takes seconds.
"""
import argparse
import math
import os
import random
import time

import numpy as np

from mindspore import context, nn, Tensor
from mindspore import dtype as mstype
import mindspore.dataset as ds
from mindspore.train import Model, Callback, ModelCheckpoint, CheckpointConfig
from mindspore.train import load_checkpoint, load_param_into_net
from mindspore.nn.metrics import Accuracy, Loss
from mindspore.common import set_seed

SMALL = os.environ.get("TUTORIAL_SIZE", "") == "small"

config = {
    "num_features": 8,
    "num_classes": 3,
    "hidden": 32,
    "batch_size": 32,
    "epoch_size": 3,
    "lr": 0.05,
    "momentum": 0.9,
    "keep_checkpoint_max": 2,
    "rows": 384 if SMALL else 6000,
    "eval_rows": 96 if SMALL else 1500,
    "seed": 7,
}


def write_csv(path, rows, seed):
    """Three Gaussian clusters in config['num_features'] dimensions, one row per sample."""
    rng = random.Random(seed)
    n = config["num_features"]
    centres = [[math.cos(k + i) * 1.5 for i in range(n)] for k in range(config["num_classes"])]
    with open(path, "w") as f:
        f.write(",".join("x%d" % i for i in range(n)) + ",label\n")
        for _ in range(rows):
            k = rng.randrange(config["num_classes"])
            f.write(",".join("%.5f" % (c + rng.gauss(0, 1.0)) for c in centres[k]) + ",%d\n" % k)


class CsvSource:
    """Random access to the rows of a CSV file: (features float32[n], label int32)."""

    def __init__(self, path):
        with open(path) as f:
            self.header = f.readline().strip().split(",")
            self.lines = [line for line in f if line.strip()]

    def __getitem__(self, index):
        fields = self.lines[index].strip().split(",")
        features = np.array([float(v) for v in fields[:-1]], dtype=np.float32)
        return features, np.array(int(fields[-1]), dtype=np.int32)

    def __len__(self):
        return len(self.lines)


def create_dataset(path, batch_size, columns, shuffle=True, num_workers=2):
    data = ds.GeneratorDataset(source=CsvSource(path), column_names=columns, shuffle=shuffle,
                               num_parallel_workers=num_workers)
    return data.batch(batch_size, drop_remainder=True)


class Net(nn.Cell):
    def __init__(self, num_features, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Dense(num_features, hidden)
        self.fc2 = nn.Dense(hidden, hidden)
        self.fc3 = nn.Dense(hidden, num_classes)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class StepLossTimeMonitor(Callback):
    """Prints each step's loss and time, and each epoch's mean loss."""

    def __init__(self, per_print_times=1):
        super().__init__()
        self.per_print_times = per_print_times
        self.losses = []

    def epoch_begin(self, run_context):
        self.losses = []
        self.epoch_start = time.time()

    def step_begin(self, run_context):
        self.step_start = time.time()

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        loss = cb_params.net_outputs
        if isinstance(loss, (tuple, list)):
            loss = loss[0]
        loss = float(loss.asnumpy())
        self.losses.append(loss)
        step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if step_in_epoch % self.per_print_times == 0:
            print("epoch: [%3d/%3d], step: [%4d/%4d], loss: %s, step time: %.3f ms"
                  % (cb_params.cur_epoch_num, cb_params.epoch_num, step_in_epoch, cb_params.batch_num,
                     repr(loss), (time.time() - self.step_start) * 1000), flush=True)

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        print("epoch %d done: mean loss %.6f, %.1f ms" % (cb_params.cur_epoch_num, sum(self.losses)
                                                          / max(1, len(self.losses)),
                                                          (time.time() - self.epoch_start) * 1000), flush=True)


def parse_args():
    parser = argparse.ArgumentParser(description="model-zoo style train.py")
    parser.add_argument("--device_target", default="CPU", choices=["CPU", "GPU", "Ascend"])
    parser.add_argument("--mode", default="graph", choices=["graph", "pynative"])
    parser.add_argument("--data_path", default="./data/train.csv")
    parser.add_argument("--ckpt_path", default="./ckpt")
    parser.add_argument("--epoch_size", type=int, default=config["epoch_size"])
    parser.add_argument("--num_workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--columns", default="data,label", help="the source's column names, comma-separated")
    return parser.parse_args()


def main():
    args = parse_args()
    mode = context.GRAPH_MODE if args.mode == "graph" else context.PYNATIVE_MODE
    context.set_context(mode=mode, device_target=args.device_target)
    set_seed(config["seed"])

    eval_path = os.path.join(os.path.dirname(args.data_path) or ".", "eval.csv")
    if not os.path.exists(args.data_path):
        os.makedirs(os.path.dirname(args.data_path) or ".", exist_ok=True)
        write_csv(args.data_path, config["rows"], 1)
        write_csv(eval_path, config["eval_rows"], 2)
    columns = args.columns.split(",")
    train_set = create_dataset(args.data_path, config["batch_size"], columns, num_workers=args.num_workers)
    step_size = train_set.get_dataset_size()

    net = Net(config["num_features"], config["hidden"], config["num_classes"])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=config["lr"], momentum=config["momentum"])
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    train_net.set_train()
    model = Model(train_net)

    ckpt_config = CheckpointConfig(save_checkpoint_steps=step_size,
                                   keep_checkpoint_max=config["keep_checkpoint_max"])
    ckpoint_cb = ModelCheckpoint(prefix="checkpoint_net", directory=args.ckpt_path, config=ckpt_config)
    model.train(args.epoch_size, train_set, callbacks=[StepLossTimeMonitor(), ckpoint_cb],
                dataset_sink_mode=False)

    # evaluate the last checkpoint in a fresh network, as eval.py would
    ckpt_file = os.path.join(args.ckpt_path, "checkpoint_net-%d_%d.ckpt" % (args.epoch_size, step_size))
    eval_net = Net(config["num_features"], config["hidden"], config["num_classes"])
    not_loaded = load_param_into_net(eval_net, load_checkpoint(ckpt_file))
    if not_loaded and not_loaded[0]:
        raise RuntimeError("parameters not loaded from %s: %s" % (ckpt_file, not_loaded))
    eval_net.set_train(False)
    eval_model = Model(eval_net, loss_fn=loss_fn, metrics={"acc": Accuracy(), "loss": Loss()})
    eval_set = create_dataset(eval_path, config["batch_size"], ["data", "label"], shuffle=False,
                              num_workers=args.num_workers)
    result = eval_model.eval(eval_set, dataset_sink_mode=False)
    print("eval of %s: acc %.4f, loss %.4f" % (os.path.basename(ckpt_file), result["acc"], result["loss"]))
    # the trained network and the restored one agree on a sample
    x = Tensor(np.ones((1, config["num_features"]), np.float32), mstype.float32)
    net.set_train(False)
    assert (net(x).asnumpy() == eval_net(x).asnumpy()).all(), "restored network differs"


if __name__ == "__main__":
    main()
