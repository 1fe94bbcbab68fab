"""Digitally reconstructed radiographs (CT -> X-ray projection).

Reference mode reproduces the benchmark's CT2Xray script step by step. Physical mode is opt-in: HU ->
linear attenuation, line integrals through the patient in a canonical (RAS) frame so the result does not
depend on how the array is stored, parallel or cone beam, radiological display, parameters in a sidecar.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from preprocess.errors import RawDataError
from preprocess.formats.smallint import is_small_int
from preprocess.volumes import transforms as T
from preprocess.volumes.io import Volume

# --- reference mode ----------------------------------------------------------------------------------------

KERNEL = np.ones((5, 5), np.uint8)
BODY_HU = -700
# The body mask is the body test closed, then opened, by the 5x5 kernel: four passes (dilate, erode, erode,
# dilate), each reading 2 px around a pixel. It is 0 outside the test's bounding box widened by 2 px (a closing
# lies within its dilation, an opening within what it opens), and each pass at a pixel of that widened box reads
# pixels within 2 px more; elsewhere an erosion reads its pixel's own 0. So the mask computed on the box widened
# by REACH is the whole slice's mask (tests/unit/volumes/test_drr_box.py).
REACH = 2 * (KERNEL.shape[0] // 2)


def reference_drr(volume: Volume) -> np.ndarray:
    """The benchmark's rule (CT2Xray), in its dtypes: float32 HU, mu = 0.0025 (HU/1000 + 1) inside a body mask
    (OpenCV close then open, 5x5, per axial slice), summed along file axis 1 times the header's voxel size,
    exp; the percentile window in float64 (the script asks for both percentiles at once, which NumPy answers
    in float64), inverted; rows = z (top = highest), OpenCV bilinear resize to square pixels, auto-crop.

    Built one axial slice at a time from the stored voxels (no whole-volume float copy); integer voxels go
    through tables of mu and of the body threshold, computed once with the script's float32 arithmetic, and
    only inside the box around the body that the mask can reach (outside it mu is multiplied by 0)."""
    import cv2

    cv2.setNumThreads(1)  # workers already take one volume per core
    data = volume.data
    if data.ndim != 3 or min(data.shape) == 0:
        raise RawDataError(f"{volume.path}: cannot project a volume of shape {data.shape}")
    zooms = volume.header_zooms
    rule = _IntegerRule(volume) if is_small_int(data.dtype) else _FloatRule(volume)
    integral = np.zeros((data.shape[2], data.shape[0]), dtype=np.float32)  # (z, x), transposed below
    for k in range(data.shape[2]):
        rule.add_slice(data[:, :, k].T, integral[k])
    projection = np.exp(-(integral.T * np.float32(zooms[1])))
    low, high = np.percentile(projection, (0.5, 99.5))
    projection = (np.clip(projection, low, high) - low) / (high - low + 1e-8)
    image = np.clip(1.0 - projection, 0, 1).astype(np.float32)
    image = _square(np.flipud(image.T), float(zooms[2]), float(zooms[0]))
    return (_autocrop(image, pct=3, pad=8) * np.float32(255)).astype(np.uint8)


def _mu(hu: np.ndarray) -> np.ndarray:
    """The script's attenuation of float32 HU, op by op in float32."""
    clipped = np.clip(hu, np.float32(-1000), np.float32(1200))
    return np.clip(np.float32(0.0025) * (clipped / np.float32(1000.0) + np.float32(1.0)), np.float32(0), None)


def _integral(mu: np.ndarray, body: np.ndarray) -> np.ndarray:
    """mu times the closed-then-opened body mask, summed over y: one axial slice (or a box of it) as (y, x), C
    order, so that the float32 sum runs y by y over rows of x, the order NumPy takes over the script's (x
    fastest) volume. Rows left out of a box hold mask 0: the script adds exact zeros there."""
    import cv2

    body = cv2.morphologyEx(cv2.morphologyEx(body, cv2.MORPH_CLOSE, KERNEL), cv2.MORPH_OPEN, KERNEL)
    mu *= body
    return mu.sum(axis=0)


def _body_box(body: np.ndarray) -> tuple[slice, slice] | None:
    """Rows and columns of the body test's bounding box widened by REACH (within the slice); None when the
    slice holds no body (its mask is all 0, and so are its integrals). The box is one column wide only when
    the slice is: NumPy would sum a single column pairwise, not row by row."""
    import cv2

    left, top, width, height = cv2.boundingRect(body)
    if width == 0:
        return None
    rows = slice(max(0, top - REACH), min(body.shape[0], top + height + REACH))
    return rows, slice(max(0, left - REACH), min(body.shape[1], left + width + REACH))


class _IntegerRule:
    """8/16-bit voxels: mu and the body test looked up per stored value (both exactly the float32 rule)."""

    def __init__(self, volume: Volume):
        info = np.iinfo(volume.data.dtype)
        hu = volume.float32(np.arange(info.min, info.max + 1, dtype=np.int64))
        shift = -info.min  # tables indexed by the unsigned view of the voxels (value + shift, wrapped)
        self.unsigned = np.dtype(f"u{volume.data.dtype.itemsize}")
        self.mu = np.roll(_mu(hu), shift)
        body = hu > BODY_HU
        first = int(np.argmax(body))
        # When HU rises with the stored value (slope > 0), the body test is one integer comparison.
        self.threshold = first + info.min if body[first] and body[first:].all() else None
        self.body = np.roll(body.astype(np.uint8), shift)

    def add_slice(self, plane: np.ndarray, out: np.ndarray) -> None:
        """Write the slice's integrals into `out` (zeros), x by x; mu is looked up inside the body's box alone:
        in a CT slice, much of the plane is air around the patient, where the mask is 0."""
        index = plane.view(self.unsigned)
        if self.threshold is not None:
            body = (plane >= self.threshold).view(np.uint8)
        else:
            body = np.take(self.body, index)
        box = _body_box(body)
        if box is not None:
            rows, cols = box
            out[cols] = _integral(np.take(self.mu, index[rows, cols]), np.ascontiguousarray(body[rows, cols]))


class _FloatRule:
    """Other dtypes: the script's float32 arithmetic on each whole slice (a NaN voxel, whose mu times 0 is NaN,
    makes its column NaN wherever it lies, so no box is taken)."""

    def __init__(self, volume: Volume):
        self.volume = volume

    def add_slice(self, plane: np.ndarray, out: np.ndarray) -> None:
        hu = np.ascontiguousarray(self.volume.float32(plane))
        out[:] = _integral(_mu(hu), (hu > BODY_HU).view(np.uint8))


def _square(image: np.ndarray, row_spacing: float, col_spacing: float) -> np.ndarray:
    if abs(row_spacing - col_spacing) <= 0.01:
        return image
    import cv2

    smallest = min(row_spacing, col_spacing)
    rows = round(image.shape[0] * (row_spacing / smallest))
    cols = round(image.shape[1] * (col_spacing / smallest))
    return cv2.resize(image, (cols, rows), interpolation=cv2.INTER_LINEAR)


def _autocrop(image: np.ndarray, pct: float, pad: int) -> np.ndarray:
    """The bounding box of the pixels above the pct percentile, widened by pad on each side; its far edges
    are max + pad, exclusive (one pixel less than max + 1 + pad), as the script slices."""
    rows, cols = np.nonzero(image > np.percentile(image, pct))
    if rows.size == 0:
        return image
    top, bottom = max(0, rows.min() - pad), min(image.shape[0], rows.max() + pad)
    left, right = max(0, cols.min() - pad), min(image.shape[1], cols.max() + pad)
    return image[top:bottom, left:right]


# --- physical mode -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DrrParams:
    mu_water: float = 0.02  # 1/mm, about 60 keV
    view: str = "AP"  # AP | PA | lateral
    geometry: str = "parallel"  # parallel | cone
    sod: float = 1000.0  # source to isocentre, mm (cone)
    sid: float = 1500.0  # source to detector, mm (cone)
    detector_spacing: float | None = None  # mm; default: the smallest voxel spacing
    detector_size: tuple[int, int] | None = None  # (rows, columns); default: covers the volume
    bone_threshold: float | None = None  # HU above which attenuation is multiplied (bone emphasis)
    bone_multiplier: float = 1.0
    display_percentiles: tuple[float, float] = (1.0, 99.0)  # window of the log image, within the body


def attenuation(hu: np.ndarray, params: DrrParams) -> np.ndarray:
    mu = (params.mu_water * np.maximum(0.0, 1.0 + hu.astype(np.float32) / 1000.0)).astype(np.float32)
    if params.bone_threshold is not None:
        mu[hu > params.bone_threshold] *= params.bone_multiplier
    return mu


def _beam_frame(mu: np.ndarray, spacing, view: str):
    """Reorder a RAS volume to (columns, depth, rows) of the detector for the view, with display flips.

    Depth is the beam direction; rows run superior -> inferior; columns follow radiological display
    (AP/PA: patient left on the image right; lateral: anterior on the image left).
    """
    if view in ("AP", "PA"):
        frame = mu[::-1, :, ::-1]  # columns: x from Right to Left; depth: y; rows: z from S to I
        if view == "AP":
            frame = frame[:, ::-1, :]  # beam enters anteriorly: depth runs A -> P
        return frame, (spacing[0], spacing[1], spacing[2])
    if view == "lateral":
        frame = mu.transpose(1, 0, 2)[::-1, :, ::-1]  # columns: y from A to P; depth: x (R -> L); rows: S -> I
        return frame, (spacing[1], spacing[0], spacing[2])
    raise ValueError(f"view must be AP, PA or lateral, got {view!r}")


def line_integrals(volume: Volume, params: DrrParams) -> tuple[np.ndarray, tuple[float, float]]:
    """Detector image of line integrals (rows x columns, superior up) and its pixel spacing in mm."""
    if volume.affine is None:
        raise RawDataError(f"{volume.path}: physical DRRs need the volume's affine")
    canonical, spacing = T.to_canonical(volume.data, volume.affine)
    mu = attenuation(volume.scaled(canonical), params)
    frame, (col_sp, depth_sp, row_sp) = _beam_frame(mu, spacing, params.view)
    if params.geometry == "parallel":
        image = frame.sum(axis=1, dtype=np.float64).T * depth_sp  # (rows, columns)
        pixel = (row_sp, col_sp)
        target = params.detector_spacing
        if target is not None and (abs(target - row_sp) > 1e-6 or abs(target - col_sp) > 1e-6):
            from skimage.transform import resize

            shape = (round(image.shape[0] * row_sp / target), round(image.shape[1] * col_sp / target))
            image, pixel = resize(image, shape, order=1, preserve_range=True, anti_aliasing=False), (target, target)
        return image, pixel
    if params.geometry == "cone":
        return _cone(frame, (col_sp, depth_sp, row_sp), params)
    raise ValueError(f"geometry must be parallel or cone, got {params.geometry!r}")


def _cone(frame: np.ndarray, spacing, params: DrrParams):
    """Rays from a point source through the volume centre onto a flat detector; trilinear samples."""
    from scipy.ndimage import map_coordinates

    n_col, n_depth, n_row = frame.shape
    col_sp, depth_sp, row_sp = spacing
    pitch = params.detector_spacing or min(spacing)
    magnification = params.sid / params.sod
    if params.detector_size:
        rows, cols = params.detector_size
    else:
        rows = int(np.ceil(n_row * row_sp * magnification / pitch))
        cols = int(np.ceil(n_col * col_sp * magnification / pitch))
    # Volume coordinates in mm, origin at the volume centre; depth axis from the source towards the detector.
    v = (np.arange(rows) - (rows - 1) / 2) * pitch  # detector rows (down = inferior)
    u = (np.arange(cols) - (cols - 1) / 2) * pitch
    half_depth = n_depth * depth_sp / 2
    step = min(spacing) / 2
    depths = np.arange(-half_depth, half_depth, step) + step / 2
    image = np.empty((rows, cols), dtype=np.float64)
    for r in range(rows):
        # A ray to detector point (u, v) at distance SID: lateral offset grows linearly with distance.
        scale = (params.sod + depths) / params.sid  # position along the ray, as a fraction of the SID
        col_mm = u[None, :] * scale[:, None]
        row_mm = np.broadcast_to(v[r] * scale[:, None], col_mm.shape)
        depth_mm = np.broadcast_to(depths[:, None], col_mm.shape)
        coords = np.stack(
            [
                col_mm / col_sp + (n_col - 1) / 2,
                depth_mm / depth_sp + (n_depth - 1) / 2,
                row_mm / row_sp + (n_row - 1) / 2,
            ]
        ).reshape(3, -1)
        samples = map_coordinates(frame, coords, order=1, mode="grid-constant", cval=0.0).reshape(col_mm.shape)
        # Path length per depth step along the oblique ray.
        length = step * np.sqrt(1 + (u[None, :] / params.sid) ** 2 + (v[r] / params.sid) ** 2)
        image[r] = (samples * length).sum(axis=0)
    return image, (pitch, pitch)


def display(image: np.ndarray, params: DrrParams) -> np.ndarray:
    """The log image (line integrals) windowed by percentiles inside the body: bone bright, air dark."""
    body = image > 1e-6
    if not body.any():
        return np.zeros(image.shape, dtype=np.uint8)
    low, high = np.percentile(image[body], params.display_percentiles)
    if high <= low:
        return np.where(body, 255, 0).astype(np.uint8)
    return ((np.clip(image, low, high) - low) / (high - low) * 255.0).astype(np.uint8)


def physical_drr(volume: Volume, params: DrrParams) -> tuple[np.ndarray, dict]:
    image, pixel = line_integrals(volume, params)
    sidecar = {
        **asdict(params),
        "pixel_spacing_mm": list(pixel),
        "detector_shape": list(image.shape),
        "units": "line integral of mu (1/mm) times mm; displayed: percentile window within the body",
    }
    return display(image, params), sidecar
