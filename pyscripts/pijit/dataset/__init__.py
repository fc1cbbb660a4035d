"""mindspore.dataset: data pipelines (issue 43)."""
