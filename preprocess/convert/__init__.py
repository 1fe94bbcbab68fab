"""Conversion kinds: each turns one subset's raw download into files under its image root."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from preprocess.convert.base import ConversionContext, run_conversion

# kind -> "module:attribute" with `plan(ctx) -> list[item]` and `build(ctx, items) -> None`.
# Imported when first used: a MedMNIST job should not pay for pandas and pydicom at start-up.
_KIND_TARGETS = {
    "image_folder": "preprocess.convert.image_folder",
    "symlink_farm": "preprocess.convert.symlink_farm",
    "npz_unpack_2d": "preprocess.convert.medmnist:Unpack2D",
    "npz_slices_3d": "preprocess.convert.medmnist:Slices3D",
    "volume_slices": "preprocess.convert.volume_slices",
    "drr": "preprocess.convert.drr",
    "parquet_extract": "preprocess.convert.parquet_extract",
    "archive_extract": "preprocess.convert.archive_extract",
    "mask_bbox_crop": "preprocess.convert.mask_bbox_crop",
    "annotation_crop": "preprocess.convert.annotation_crop",
}


class _LazyKinds(Mapping):
    def __getitem__(self, kind: str):
        module_name, _, attribute = _KIND_TARGETS[kind].partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attribute) if attribute else module

    def __iter__(self):
        return iter(_KIND_TARGETS)

    def __len__(self) -> int:
        return len(_KIND_TARGETS)


KINDS = _LazyKinds()

__all__ = ["KINDS", "ConversionContext", "available", "run_conversion"]


def available(kind: str) -> bool:
    return kind in _KIND_TARGETS
