"""Boxes and crops. One convention for the whole code base:

A box is (x0, y0, x1, y1) in integer pixel units, half-open: it covers columns x0 .. x1-1 and rows
y0 .. y1-1, so width = x1 - x0 and a crop is image[y0:y1, x0:x1]. An empty mask has no box (None): callers
skip it and record why, never write a zero-size crop.
"""

from __future__ import annotations

import numpy as np

Box = tuple[int, int, int, int]


def mask_box(mask: np.ndarray, threshold: float = 0) -> Box | None:
    """Tight half-open box of the pixels > threshold; None for an empty mask."""
    on = np.asarray(mask) > threshold
    if on.ndim == 3:
        on = on.any(axis=2)
    rows, cols = np.flatnonzero(on.any(axis=1)), np.flatnonzero(on.any(axis=0))
    if rows.size == 0:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


def component_boxes(mask: np.ndarray, threshold: float = 0, min_pixels: int = 1) -> list[Box]:
    """One box per 8-connected component of the pixels > threshold, in label order."""
    from skimage.measure import label, regionprops

    on = np.asarray(mask) > threshold
    if on.ndim == 3:
        on = on.any(axis=2)
    boxes = []
    for region in regionprops(label(on, connectivity=2)):
        if region.area >= min_pixels:
            y0, x0, y1, x1 = region.bbox  # skimage: half-open (min_row, min_col, max_row, max_col)
            boxes.append((int(x0), int(y0), int(x1), int(y1)))
    return boxes


def clamp(box: Box, width: int, height: int) -> Box | None:
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(width, box[2]), min(height, box[3])
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _grow(low: int, high: int, centre: int, minimum: int, limit: int) -> tuple[int, int]:
    size = max(high - low, minimum)
    low = centre - size // 2
    high = low + size
    if low < 0:
        high, low = high - low, 0
    if high > limit:
        low, high = low - (high - limit), limit
    return max(low, 0), high


def _reference_axis(low: int, high: int, limit: int, minimum: int) -> tuple[int, int]:
    centre, size = (low + high) // 2, max(high - low, minimum)
    low = max(0, centre - size // 2)
    high = min(limit, low + size)
    return max(0, high - size), high


def reference_crop(x0: float, y0: float, x1: float, y1: float, width: int, height: int, minimum: int = 28) -> Box:
    """The grounding scripts' crop rule: coordinates truncated to integers and floored at 0 (as the scripts
    read them), centre = integer midpoint, size = max(extent, minimum), start = max(0, centre - size // 2),
    end = min(limit, start + size), start = max(0, end - size); right/bottom edges exclusive (PIL crop)."""
    ix0, iy0, ix1, iy1 = (max(0, int(v)) for v in (x0, y0, x1, y1))
    left, right = _reference_axis(ix0, ix1, width, minimum)
    top, bottom = _reference_axis(iy0, iy1, height, minimum)
    return left, top, right, bottom


def clip_to_image(box: Box, width: int, height: int) -> Box | None:
    """The grounding scripts' clamp: x0 into [0, width - 1], x1 into [0, width] (rows alike); None when empty.

    Unlike `clamp`, a box wholly past the right or bottom edge keeps the last column or row, as theirs does."""
    x0, y0 = max(0, min(box[0], width - 1)), max(0, min(box[1], height - 1))
    x1, y1 = max(0, min(box[2], width)), max(0, min(box[3], height))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def grow_to_minimum(box: Box, width: int, height: int, minimum: int = 28) -> Box:
    """PanNuke grounding: a half-open box grown to `minimum` (capped at the image) around its centre, shifted
    back inside. The start is round(centre - size / 2) with Python's round (halves to even), as in the script."""
    x0, x1 = _centred(box[0], box[2], minimum, width)
    y0, y1 = _centred(box[1], box[3], minimum, height)
    return x0, y0, x1, y1


def _centred(low: int, high: int, minimum: int, limit: int) -> tuple[int, int]:
    size = min(max(high - low, minimum), limit)
    start = round((low + high) / 2.0 - size / 2.0)
    end = start + size
    if start < 0:
        start, end = 0, end - start
    if end > limit:
        start, end = max(0, start - (end - limit)), limit
    return max(0, start), min(limit, end)


def area(box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _intersection(a, b) -> float:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _overlapping(a, b, iou: float, overlap: float) -> bool:
    inter = _intersection(a, b)
    if inter == 0:  # also keeps empty boxes from dividing by zero
        return False
    return inter / (area(a) + area(b) - inter) >= iou or inter / min(area(a), area(b)) >= overlap


def merge_overlapping(boxes: list, iou: float = 0.5, overlap: float = 0.7) -> list:
    """The VinDr grounding scripts' merge: find the first pair (i < j, in list order) with IoU >= iou or
    intersection >= overlap of the smaller box, drop both, append their union at the END of the list, and
    start over until no pair qualifies. The order decides which boxes meet first, so it decides the result
    and the crop numbering; boxes keep the caller's values (integers, as the scripts truncate them)."""
    merged = [tuple(b) for b in boxes]
    while True:
        pair = next(
            (
                (i, j)
                for i in range(len(merged))
                for j in range(i + 1, len(merged))
                if _overlapping(merged[i], merged[j], iou, overlap)
            ),
            None,
        )
        if pair is None:
            return merged
        a, b = merged[pair[0]], merged[pair[1]]
        merged = [box for k, box in enumerate(merged) if k not in pair]
        merged.append((min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])))


def crop(image: np.ndarray, box: Box) -> np.ndarray:
    x0, y0, x1, y1 = box
    return image[y0:y1, x0:x1]
