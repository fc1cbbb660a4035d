"""MindSpore's mindspore._extends.parse: pijit has its compile_config (see there)."""
from pijit._extends.parse import compile_config  # noqa: F401
