"""MindSpore 2.5's device_context: device_context.cpu / device_context.gpu .is_available() and
.device_count() (pijit.hal answers both)."""
from pijit.device_context import cpu, gpu
