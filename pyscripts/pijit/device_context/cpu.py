"""device_context.cpu: the host CPU, always there."""
from pijit import hal


def is_available():
    return hal.is_available("CPU")


def device_count():
    return hal.device_count("CPU")
