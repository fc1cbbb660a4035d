"""device_context.gpu: NVIDIA GPUs pijit's backend can reach (pijit.hal's probe)."""
from pijit import hal


def is_available():
    return hal.is_available("GPU")


def device_count():
    return hal.device_count("GPU")
