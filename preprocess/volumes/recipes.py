"""Per-dataset slicing recipes: which files are volumes, where their slices go, how values become 8 bits.

Each discover_* function walks one raw download and returns Cases in a stable (natural) order. Output folders
are relative to the subset folder (e.g. 3D_Images/CT_RATE). Parameters and names follow the benchmark's own
scripts (see the README, "3D slicing"); per-dataset differences that a parameter cannot express live here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from preprocess.csvio import read_split_csv
from preprocess.errors import RawDataError

SLICES = 64


@dataclass(frozen=True)
class Profile:
    """How a volume becomes 8-bit slices."""

    kind: str  # ct_window | mr_contiguous | mr_list | mrnet
    level: float = 0.0
    width: float = 0.0
    low_pct: float = 0.5
    high_pct: float = 99.5
    fraction: float = 0.015
    short: str = "round"  # mr_list: positions when the informative list is short (round | floor)
    count: int = SLICES


@dataclass(frozen=True)
class Case:
    source: Path
    out_dir: str
    profile: Profile
    sort_key: tuple = field(default=(), compare=False)


def natural_key(text: str) -> tuple:
    """'case_2' < 'case_10'; zero padding is kept in names, only the order is natural."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _sorted(cases: list[Case]) -> list[Case]:
    return sorted(cases, key=lambda c: natural_key(c.out_dir))


def _rglob(base: Path, pattern: str) -> list[Path]:
    return [p for p in base.glob(pattern) if p.is_file() and "overview" not in p.relative_to(base).parts]


def _strip_nii(name: str) -> str:
    return re.sub(r"\.nii(\.gz)?$", "", name)


def ct_rate(base: Path, params: dict) -> list[Case]:
    profile = Profile("ct_window", level=-600, width=1500)
    files = _rglob(base, "dataset/valid_fixed/*/*/*_1.nii.gz")
    return _sorted([Case(f, f"valid_fixed_sliced/{f.parent.name}", profile) for f in files])


def radgenome_chestct(base: Path, params: dict) -> list[Case]:
    profile = Profile("ct_window", level=-600, width=1500)
    root = base / "dataset" / "valid_preprocessed"
    files = _rglob(root, "**/*_1.nii.gz")
    return _sorted(
        [Case(f, f"valid_preprocessed_sliced/{f.parent.relative_to(root).as_posix()}", profile) for f in files]
    )


def cirrmri600(base: Path, params: dict) -> list[Case]:
    sequence = params["sequence"]  # T1 or T2
    profile = Profile("mr_contiguous", low_pct=1.0, high_pct=99.5, fraction=0.01)
    split_csv = base / f"Cirrhosis_{sequence}_slide_folders.csv"
    splits = read_split_csv(split_csv, ("folder_name",))
    found = {}
    for path in _rglob(base, f"**/Cirrhosis_{sequence}_3D/*_images/*.nii.gz"):
        found.setdefault(_strip_nii(path.name), path)
    for path in _rglob(base, f"**/{sequence}_W_Healthy/{sequence}_images/*.nii.gz"):
        found.setdefault(f"healthy_{_strip_nii(path.name)}", path)
    cases = [
        Case(path, f"Cirrhosis_{sequence}_slide/{splits[folder]}/{folder}", profile)
        for folder, path in found.items()
        if folder in splits
    ]
    return _sorted(cases)


def brats_ped(base: Path, params: dict) -> list[Case]:
    profile = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")
    cases = []
    for modality in ("t1n", "t2w"):
        for path in _rglob(base, f"**/BraTS-PED-*-{modality}.nii.gz"):
            case_id = path.parent.name
            split = "train" if any("TrainingData" in part for part in path.relative_to(base).parts) else "val"
            cases.append(Case(path, f"{split}/{modality}/{case_id}", profile))
    return _sorted(_unique(cases))


def brats_men(base: Path, params: dict) -> list[Case]:
    profile = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")
    wanted = None
    if params.get("cases_file"):
        wanted = {line.strip() for line in (base / params["cases_file"]).read_text().splitlines() if line.strip()}
    cases = [
        Case(p, f"BraTS-MEN-Test/{p.parent.name}", profile)
        for p in _rglob(base, "**/BraTS-MEN-*-t1n.nii.gz")
        if wanted is None or p.parent.name in wanted
    ]
    return _sorted(_unique(cases))


def hanseg(base: Path, params: dict) -> list[Case]:
    ct = Profile("ct_window", level=50, width=350)
    mr = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")
    cases = [Case(p, f"CT_slides/{p.parent.name}", ct) for p in _rglob(base, "set_1/case_*/case_*_IMG_CT.nrrd")]
    cases += [Case(p, f"MRI_slides/{p.parent.name}", mr) for p in _rglob(base, "set_1/case_*/case_*_IMG_MR_T1.nrrd")]
    return _sorted(cases)


SYNTHRAD = {
    ("brain", "ct"): Profile("ct_window", level=40, width=80),
    ("pelvis", "ct"): Profile("ct_window", level=35, width=350),
    ("brain", "mr"): Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="floor"),
    ("pelvis", "mr"): Profile("mr_list", low_pct=1.0, high_pct=99.5, fraction=0.02, short="floor"),
}


def synthrad2023(base: Path, params: dict) -> list[Case]:
    cases = []
    for (region, modality), profile in SYNTHRAD.items():
        folder = "ct" if modality == "ct" else "mri"
        for path in _rglob(base, f"Task1/{region}/*/{modality}.nii.gz"):
            cases.append(Case(path, f"images/{folder}/{path.parent.name}", profile))
    return _sorted(cases)


def mrnet(base: Path, params: dict) -> list[Case]:
    profile = Profile("mrnet", count=10)
    cases = [
        Case(p, f"valid_images/{p.parent.name}/{p.stem}", profile)
        for p in _rglob(base, "MRNet-v1.0/valid/*/*.npy")
        if p.parent.name in ("axial", "coronal", "sagittal")
    ]
    return _sorted(cases)


def mmdental(base: Path, params: dict) -> list[Case]:
    profile = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.0, short="floor")
    return _sorted([Case(p, f"cbct_png/{p.parent.name}", profile) for p in _rglob(base, "*/*.nii.gz")])


def _unique(cases: list[Case]) -> list[Case]:
    """One case per output folder: a copy extracted twice (or a fix archive over the data) is an error."""
    seen: dict[str, Case] = {}
    for case in cases:
        if case.out_dir in seen and seen[case.out_dir].source != case.source:
            raise RawDataError(
                f"{seen[case.out_dir].source} and {case.source} both give {case.out_dir}; "
                "remove the duplicate copy from the raw folder"
            )
        seen[case.out_dir] = case
    return list(seen.values())


DATASETS = {
    "ct_rate": ct_rate,
    "radgenome_chestct": radgenome_chestct,
    "cirrmri600": cirrmri600,
    "brats_ped": brats_ped,
    "brats_men": brats_men,
    "hanseg": hanseg,
    "synthrad2023": synthrad2023,
    "mrnet": mrnet,
    "mmdental": mmdental,
}
