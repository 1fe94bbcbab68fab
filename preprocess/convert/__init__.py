"""Conversion kinds: each turns one subset's raw download into files under its image root."""

from __future__ import annotations

from preprocess.convert import (
    annotation_crop,
    archive_extract,
    drr,
    image_folder,
    mask_bbox_crop,
    parquet_extract,
    symlink_farm,
    volume_slices,
)
from preprocess.convert.base import ConversionContext, run_conversion
from preprocess.convert.medmnist import Slices3D, Unpack2D

# kind -> module with `plan(ctx) -> list[item]` and `build(ctx, items) -> None`
KINDS = {
    "image_folder": image_folder,
    "symlink_farm": symlink_farm,
    "npz_unpack_2d": Unpack2D,
    "npz_slices_3d": Slices3D,
    "volume_slices": volume_slices,
    "drr": drr,
    "parquet_extract": parquet_extract,
    "archive_extract": archive_extract,
    "mask_bbox_crop": mask_bbox_crop,
    "annotation_crop": annotation_crop,
}

__all__ = ["KINDS", "ConversionContext", "available", "run_conversion"]


def available(kind: str) -> bool:
    return kind in KINDS
