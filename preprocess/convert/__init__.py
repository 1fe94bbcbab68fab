"""Conversion kinds: each turns one subset's raw download into files under its image root.

The kinds are declared in preprocess/registry/kinds.yaml, their recipes in the dataset folders' recipes.yaml
(preprocess/datasets/README.md); a kind's module, and a recipe's code, is imported when a job of that kind runs
(a MedMNIST job should not pay for pyarrow and pydicom at start-up, nor a process that only loads the registry).
"""

from __future__ import annotations

from preprocess.convert.base import ConversionContext, load_object, run_conversion
from preprocess.registry.model import Kind

__all__ = ["ConversionContext", "kind_module", "run_conversion"]


def kind_module(kind: Kind):
    """The object with plan(ctx) and build(ctx, items) of a kind."""
    return load_object(kind.module)
