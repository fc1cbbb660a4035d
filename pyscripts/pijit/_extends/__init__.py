"""MindSpore's mindspore._extends: only parse.compile_config has a meaning in pijit."""
