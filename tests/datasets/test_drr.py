"""DRR: the reference rule recomputed independently, and the physical mode against analytic phantoms."""

from __future__ import annotations

import json

import nibabel as nib
import numpy as np
import pytest
from PIL import Image

from preprocess.pipeline import steps
from preprocess.registry.config import settings_from_dict
from preprocess.volumes.drr import DrrParams, line_integrals, physical_drr
from preprocess.volumes.io import Volume

N, R, MU = 128, 40.0, 0.02
CENTRES = np.arange(N) - (N - 1) / 2


def reference_rule(path) -> np.ndarray:
    """REFERENCE.md, CT-RATE DRR (3D_Task/CT-RATE/CT2Xray.py), step by step on the whole volume, in the
    script's dtypes, with OpenCV for the body mask and the resize."""
    import cv2

    image = nib.load(str(path))
    data = np.asarray(image.dataobj).astype(np.float32)
    zooms = image.header.get_zooms()[:3]
    mu = np.clip(0.0025 * (np.clip(data, -1000, 1200) / 1000.0 + 1.0), 0, None).astype(np.float32)
    mask = (data > -700).astype(np.uint8)
    for z in range(mask.shape[2]):
        closed = cv2.morphologyEx(mask[:, :, z], cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        mask[:, :, z] = cv2.morphologyEx(closed, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    mu = mu * mask.astype(np.float32)
    projection = np.exp(-(np.sum(mu, axis=1) * float(zooms[1])))
    p_low, p_high = np.percentile(projection, (0.5, 99.5))
    projection = (np.clip(projection, p_low, p_high) - p_low) / (p_high - p_low + 1e-8)
    picture = np.flipud(np.clip(1.0 - projection, 0, 1).astype(np.float32).T)
    sp_row, sp_col = float(zooms[2]), float(zooms[0])
    if abs(sp_row - sp_col) > 0.01:
        smallest = min(sp_row, sp_col)
        size = (round(picture.shape[1] * (sp_col / smallest)), round(picture.shape[0] * (sp_row / smallest)))
        picture = cv2.resize(picture, size, interpolation=cv2.INTER_LINEAR)
    coords = np.argwhere(picture > np.percentile(picture, 3))
    (y0, x0), (y1, x1) = coords.min(axis=0), coords.max(axis=0)
    h, w = picture.shape
    picture = picture[max(0, y0 - 8) : min(h, y1 + 8), max(0, x0 - 8) : min(w, x1 + 8)]  # the max edge + 8, exclusive
    return (picture * 255).astype(np.uint8)


def test_reference_mode_matches_the_rule_pixel_for_pixel(settings, demo):
    steps.Build(settings).convert(subset="CT_RATE", conversion="volumes")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE" / "valid_fixed_drr"
    raw = demo / "raw" / "CT-RATE" / "dataset" / "valid_fixed"
    assert sorted(p.name for p in root.iterdir()) == ["valid_1_a", "valid_2_a", "valid_2_b"]
    for sub in ("valid_1_a", "valid_2_a", "valid_2_b"):  # valid_2_b: stored uint16 with a header intercept
        assert sorted(p.name for p in (root / sub).iterdir()) == ["drr_ap.png"]
        with Image.open(root / sub / "drr_ap.png") as image:
            assert image.mode == "L"
            got = np.array(image)
        want = reference_rule(next(raw.glob(f"*/{sub}/{sub}_1.nii.gz")))
        assert got.shape == want.shape
        assert np.array_equal(got, want), sub


def _sphere(partial_volume: bool) -> np.ndarray:
    x, y, z = np.meshgrid(CENTRES, CENTRES, CENTRES, indexing="ij")
    if not partial_volume:
        return np.where(x**2 + y**2 + z**2 <= R * R, 0, -1000).astype(np.int16)
    inside = np.zeros((N, N, N), dtype=np.float32)
    offsets = (np.arange(4) + 0.5) / 4 - 0.5  # 4x4x4 sub-voxels
    for dx in offsets:
        for dy in offsets:
            for dz in offsets:
                inside += (x + dx) ** 2 + (y + dy) ** 2 + (z + dz) ** 2 <= R * R
    return (-1000 + 1000 * inside / 64).astype(np.float32)  # HU whose attenuation is the inside fraction


@pytest.mark.parametrize(("partial_volume", "tolerance"), [(False, 1.0), (True, 0.25)])
def test_parallel_beam_matches_chord_lengths(partial_volume, tolerance):
    projection, pixel = line_integrals(Volume(_sphere(partial_volume), np.eye(4)), DrrParams())
    assert pixel == (1.0, 1.0)
    rows, cols = np.meshgrid(CENTRES, CENTRES, indexing="ij")
    d = np.hypot(rows, cols)
    expected = 2 * MU * np.sqrt(np.clip(R * R - d * d, 0, None))
    near = d <= 0.9 * R
    assert np.abs(projection - expected)[near].max() <= tolerance * MU * 1.0


def test_parallel_beam_conserves_mass():
    hu = _sphere(True)
    projection, pixel = line_integrals(Volume(hu, np.eye(4)), DrrParams())
    mu_total = (MU * np.maximum(0, 1 + hu.astype(np.float64) / 1000)).sum() * 1.0  # voxel volume 1 mm^3
    assert abs(projection.sum() * pixel[0] * pixel[1] / mu_total - 1) < 1e-6


def test_cone_beam_against_geometry():
    params = DrrParams(geometry="cone", sod=1000.0, sid=1500.0, detector_size=(193, 193), detector_spacing=1.0)
    projection, _ = line_integrals(Volume(_sphere(False), np.eye(4)), params)
    u = np.arange(193) - 96.0
    rho = np.hypot(*np.meshgrid(u, u, indexing="ij"))
    d = params.sod * rho / np.hypot(params.sid, rho)  # distance of each ray from the sphere centre
    expected = 2 * MU * np.sqrt(np.clip(R * R - d * d, 0, None))
    assert abs(projection[96, 96] / (2 * MU * R) - 1) <= 1e-3
    error = np.abs(projection - expected)[d <= 0.9 * R] / MU
    assert error.mean() <= 0.5 and error.max() <= 2.5
    shadow = np.flatnonzero(projection[96] > 1e-9)
    radius = (shadow[-1] - shadow[0]) / 2
    assert abs(radius - R * params.sid / np.sqrt(params.sod**2 - R * R)) <= 1.0


def _marked_phantom() -> np.ndarray:
    hu = np.full((40, 36, 30), -1000, dtype=np.int16)
    hu[5:35, 6:30, 3:27] = 0
    hu[6:10, 24:29, 21:26] = 1500  # Left (small x), Anterior (large y), Superior (large z)
    return hu


def _storages():
    hu = _marked_phantom()
    ras = np.diag([1.0, 1.2, 2.0, 1.0])
    lps = ras.copy()
    lps[:3, :2] *= -1
    permuted = np.eye(4)
    permuted[:3, :3] = ras[:3, :3][:, [2, 0, 1]]
    return {
        "ras": Volume(hu, ras),
        "lps": Volume(hu[::-1, ::-1].copy(), lps),
        "permuted": Volume(hu.transpose(2, 0, 1).copy(), permuted),
    }


@pytest.mark.parametrize("view", ["AP", "PA", "lateral"])
def test_storage_invariance_and_marker_position(view):
    images = {name: line_integrals(volume, DrrParams(view=view))[0] for name, volume in _storages().items()}
    reference = images.pop("ras")
    for name, image in images.items():
        assert np.abs(image - reference).max() < 1e-6 * np.ptp(reference), name
    if view != "lateral":
        rows, cols = np.nonzero(reference > reference.max() - 0.01 * np.ptp(reference))  # the marker
        assert rows.mean() < reference.shape[0] / 2 and cols.mean() > reference.shape[1] / 2  # top right


def test_physical_mode_writes_a_sidecar(demo, tmp_path):
    values = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "subsets": "all",
        "registry_overrides": str(demo / "registry-overrides.yaml"),
        "drr": {"mode": "physical", "view": "PA", "bone_threshold": 300, "bone_multiplier": 2.0},
    }
    settings = settings_from_dict(values)
    steps.Build(settings).convert(subset="CT_RATE", conversion="volumes")
    folder = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE" / "valid_fixed_drr" / "valid_1_a"
    sidecar = json.loads((folder / "drr_pa.json").read_text())
    assert sidecar["view"] == "PA" and sidecar["mu_water"] == 0.02 and sidecar["bone_multiplier"] == 2.0
    assert len(sidecar["pixel_spacing_mm"]) == 2 and sidecar["geometry"] == "parallel"
    with Image.open(folder / "drr_pa.png") as image:
        assert image.mode == "L" and np.array(image).max() == 255


def test_display_is_bone_bright():
    image, _ = physical_drr(Volume(_marked_phantom(), np.eye(4)), DrrParams())
    marker_rows, marker_cols = np.nonzero(image == 255)
    assert marker_rows.size and marker_cols.mean() > image.shape[1] / 2
