"""`mindspore.nn.loss.loss`: the loss cells (pijit.nn's objects; the ones pijit has)."""
from pijit._reexport import reexport

reexport(__name__, ("pijit.nn",), [
    "LossBase", "L1Loss", "MSELoss", "SmoothL1Loss", "SoftMarginLoss",
    "SoftmaxCrossEntropyWithLogits", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss",
    "CosineEmbeddingLoss", "FocalLoss", "KLDivLoss", "HuberLoss", "MAELoss", "RMSELoss",
    "MultiClassDiceLoss", "DiceLoss", "SampledSoftmaxLoss", "PoissonNLLLoss", "GaussianNLLLoss",
    "MarginRankingLoss", "MultiMarginLoss", "MultiLabelSoftMarginLoss", "CTCLoss",
    "TripletMarginLoss", "HingeEmbeddingLoss", "MultilabelMarginLoss",
])
