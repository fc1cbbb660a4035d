"""ResNet (resnet_zoo.py's bottleneck network) trained in float16 mixed precision, as the model
zoo's ResNet train.py does it:

    python resnet_amp_zoo.py to_float   the network cast with net.to_float(mstype.float16), every
                                        BatchNorm kept float32 (cell.to_float(mstype.float32)), the
                                        loss in float32 (what amp's O2 level does by hand)
    python resnet_amp_zoo.py O2         amp.build_train_network(net, opt, loss, level="O2",
                                        loss_scale_manager=FixedLossScaleManager(...))

(a second argument `eager` runs the eager half alone.) A few steps eagerly and in GRAPH_MODE from the same start; float16 rounding differs between fused
and unfused kernels, so the losses are compared within a tolerance (the summary says whether they
are bitwise equal too)."""
import sys

import mindspore.nn as nn
import mindspore.common.dtype as mstype
import mindspore.ops.operations as P
from mindspore import context

import zoo_common as zc
from resnet_zoo import tiny_resnet, make_optimizer, CrossEntropySmooth


class CastToFloat32(nn.Cell):
    """The network's float16 logits as float32 for the loss."""

    def __init__(self, network):
        super(CastToFloat32, self).__init__(auto_prefix=False)
        self.network = network
        self.cast = P.Cast()

    def construct(self, x):
        return self.cast(self.network(x), mstype.float32)


def half(net):
    net.to_float(mstype.float16)
    for _, cell in net.cells_and_names():
        if isinstance(cell, (nn.BatchNorm2d, nn.BatchNorm1d)):
            cell.to_float(mstype.float32)
    return CastToFloat32(net)


def train_net(net, mode, steps):
    loss = CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=10)
    if mode == "O2":
        from mindspore import amp
        from mindspore.train.loss_scale_manager import FixedLossScaleManager
        manager = FixedLossScaleManager(128.0, drop_overflow_update=False)
        step = amp.build_train_network(net, make_optimizer(net, steps, loss_scale=128.0), loss, level="O2",
                                       loss_scale_manager=manager)
    else:
        step = nn.TrainOneStepCell(nn.WithLossCell(half(net), loss), make_optimizer(net, steps))
    step.set_train()
    return step


def main(mode, phases="both", steps=4):
    zc.seeded(2)
    x, y = zc.images(11, (4, 3, 32, 32), 10)
    eager_net = tiny_resnet("bottleneck", 10)
    jit_net = tiny_resnet("bottleneck", 10)
    zc.same_start(eager_net, jit_net)

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net, mode, steps)
    eager = [zc.as_float(step(x, y)) for _ in range(steps)]
    eager_net.set_train(False)
    dtypes = {"weight_dtype": str(eager_net.conv1.weight.dtype), "logits_dtype": str(eager_net(x).dtype)}
    if phases == "eager":  # the eager run alone (pijit cannot capture a to_float Cell yet)
        zc.report("resnet_amp_" + mode, eager, None, -1, -1, **dtypes)
        return

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net, mode, steps)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(x, y)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("resnet_amp_" + mode, eager, jitted, graphs, breaks, **dtypes)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "to_float", sys.argv[2] if len(sys.argv) > 2 else "both")
