"""Conversion kinds: each turns one subset's raw download into files under its image root.

The kinds are declared in preprocess/registry/kinds.yaml; a kind's module is imported when a job of that kind
runs (a MedMNIST job should not pay for pyarrow and pydicom at start-up).
"""

from __future__ import annotations

import importlib

from preprocess.convert.base import ConversionContext, run_conversion
from preprocess.registry.loader import Kind

__all__ = ["ConversionContext", "kind_module", "run_conversion"]


def kind_module(kind: Kind):
    """The object with plan(ctx) and build(ctx, items) of a kind."""
    module_name, _, attribute = kind.module.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module
