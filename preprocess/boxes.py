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


def reference_crop(x0: float, y0: float, x1: float, y1: float, width: int, height: int, minimum: int = 28) -> Box:
    """The grounding scripts' crop rule: truncate to integers (floored at 0), integer midpoint as centre,
    at least `minimum` pixels each way, shifted back inside the image; right/bottom edges exclusive."""
    ix0, iy0 = max(0, int(x0)), max(0, int(y0))
    ix1, iy1 = max(0, int(x1)), max(0, int(y1))
    left, right = _grow(ix0, ix1, (ix0 + ix1) // 2, minimum, width)
    top, bottom = _grow(iy0, iy1, (iy0 + iy1) // 2, minimum, height)
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


def merge_overlapping(boxes: list, iou: float = 0.5, overlap: float = 0.7) -> list:
    """VinDr-CXR: merge any pair with IoU >= iou, or intersection >= overlap of the smaller box, into their
    union, until no pair qualifies. Boxes are floats (x_min, y_min, x_max, y_max) as the CSV gives them."""
    merged = [tuple(float(v) for v in b) for b in boxes]
    changed = True
    while changed:
        changed = False
        for i in range(len(merged)):
            for j in range(i + 1, len(merged)):
                a, b = merged[i], merged[j]
                inter = _intersection(a, b)
                union = area(a) + area(b) - inter
                smaller = min(area(a), area(b))
                if (union > 0 and inter / union >= iou) or (smaller > 0 and inter / smaller >= overlap):
                    merged[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del merged[j]
                    changed = True
                    break
            if changed:
                break
    return merged


def crop(image: np.ndarray, box: Box) -> np.ndarray:
    x0, y0, x1, y1 = box
    return image[y0:y1, x0:x1]
