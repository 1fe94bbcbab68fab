"""Digitally reconstructed radiographs (CT -> X-ray projection).

Reference mode reproduces the benchmark's CT2Xray script step by step. Physical mode is opt-in: HU ->
linear attenuation, line integrals through the patient in a canonical (RAS) frame so the result does not
depend on how the array is stored, parallel or cone beam, radiological display, parameters in a sidecar.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from preprocess.errors import RawDataError
from preprocess.volumes import transforms as T
from preprocess.volumes.io import Volume

# --- reference mode ----------------------------------------------------------------------------------------


def reference_drr(volume: Volume) -> np.ndarray:
    """The benchmark's rule: mu = 0.0025 (HU/1000 + 1) inside a body mask, sum along file axis 1, exp,
    0.5/99.5 percentile window, invert, rows = z (top = highest), square pixels, auto-crop, 8 bits."""
    from skimage.morphology import closing, opening

    data = volume.data
    if data.ndim != 3 or min(data.shape) == 0:
        raise RawDataError(f"{volume.path}: cannot project a volume of shape {data.shape}")
    spacing = volume.spacing
    footprint = np.ones((5, 5), dtype=bool)
    integral = np.empty((data.shape[0], data.shape[2]), dtype=np.float64)
    for k in range(data.shape[2]):  # slab by slab: no float64 copy of the whole volume
        hu = np.clip(volume.scaled(np.asarray(data[:, :, k])).astype(np.float64), -1000, 1200)
        mu = np.maximum(0.0025 * (hu / 1000.0 + 1.0), 0.0)
        body = opening(closing(hu > -700, footprint), footprint)
        integral[:, k] = (mu * body).sum(axis=1) * spacing[1]
    projection = np.exp(-integral)
    low, high = np.percentile(projection, [0.5, 99.5])
    if high > low:
        projection = (np.clip(projection, low, high) - low) / (high - low)
    else:
        projection = np.zeros_like(projection)
    image = np.flipud((1.0 - projection).T)  # rows: z, highest at the top; columns: file axis 0
    image = _square(image, spacing[2], spacing[0])
    return (_autocrop(image, pct=3.0, pad=8) * 255.0).astype(np.uint8)


def _square(image: np.ndarray, row_spacing: float, col_spacing: float) -> np.ndarray:
    if abs(row_spacing - col_spacing) <= 0.01:
        return image
    from skimage.transform import resize

    smallest = min(row_spacing, col_spacing)
    shape = (round(image.shape[0] * row_spacing / smallest), round(image.shape[1] * col_spacing / smallest))
    return resize(image, shape, order=1, preserve_range=True, anti_aliasing=False)


def _autocrop(image: np.ndarray, pct: float, pad: int) -> np.ndarray:
    keep = image > np.percentile(image, pct)
    if not keep.any():
        return image
    rows, cols = np.flatnonzero(keep.any(axis=1)), np.flatnonzero(keep.any(axis=0))
    top, bottom = max(0, rows[0] - pad), min(image.shape[0], rows[-1] + 1 + pad)
    left, right = max(0, cols[0] - pad), min(image.shape[1], cols[-1] + 1 + pad)
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
