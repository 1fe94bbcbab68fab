"""Per-dataset slicing recipes: which files are volumes, what names they supply, how values become 8 bits.
The recipes are declared in the dataset folders' recipes.yaml (under volume_slices), each naming its function here.

Each recipe walks one raw download and returns Cases: a volume, its profile, the fields that its output
folder template may use (and a role, when one dataset has series of several kinds). The folder and file
names themselves are templates in the subset's entry of datasets/<source id>/subsets.yaml; `resolve` formats them.

Fields per recipe ({field} in the `folder` template; roles choose among several templates); {split} is also
what the kind's `splits` parameter selects:
  ct_rate            {split} valid | train (dataset/<split>_fixed/, only the folders of `splits` are read),
                     {patient} valid_1, {scan} valid_1_a
  radgenome_chestct  {split} valid | train (dataset/<split>_preprocessed/, as ct_rate), {path} the volume's
                     folder under it, e.g. valid_1004/valid_1004a
  cirrmri600         {split} from the split CSV, {case} the CSV's folder_name (healthy subjects: healthy_<id>)
  brats_ped          roles training | validation (the raw folder holds TrainingData or not), {split} train | val
                     likewise; {modality}, {case}
  brats_men          {case}
  hanseg             roles ct | mr; {case}
  synthrad2023       roles ct | mr; {region} brain | pelvis, {case}
  mrnet              {split} valid | train (MRNet-v1.0/<split>/, as ct_rate), {plane}, {case}
  mmdental           {case}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from preprocess.errors import PreprocessError, RawDataError
from preprocess.formats.csvio import read_split_csv
from preprocess.registry.layout import fill

SLICES = 64


@dataclass(frozen=True)
class Profile:
    """How a volume becomes 8-bit slices."""

    kind: str  # ct_window | mr_contiguous | mr_list | mrnet | cbct_views
    level: float = 0.0
    width: float = 0.0
    low_pct: float = 0.5
    high_pct: float = 99.5
    fraction: float = 0.015
    short: str = "round"  # mr_list: positions when the informative list is short (round | floor)
    count: int = SLICES  # per view for cbct_views
    stretch: float = 1.0  # cbct_views: the window's upper bound moved out by this factor
    views: tuple[tuple[str, int], ...] = ()  # cbct_views: (view, array axis) in output order
    span: tuple[float, float] = (0.0, 1.0)  # cbct_views: part of each axis the slices are taken from


@dataclass(frozen=True)
class Case:
    source: Path
    profile: Profile
    fields: dict = field(default_factory=dict, compare=False)
    role: str | None = None
    out_dir: str = ""  # set by resolve()


def natural_key(text: str) -> tuple:
    """'case_2' < 'case_10'; zero padding is kept in names, only the order is natural."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def resolve(cases: list[Case], folder, where: str) -> list[Case]:
    """Give each case its output folder from the template (or the role's template), one case per folder, in
    natural order of the folders."""
    named = [replace(case, out_dir=fill(_template_for(folder, case, where), case.fields, where)) for case in cases]
    return sorted(_unique(named), key=lambda c: natural_key(c.out_dir))


def _template_for(folder, case: Case, where: str) -> str:
    if isinstance(folder, str):
        return folder
    if case.role not in folder:
        raise PreprocessError(f"{where}: the folder templates have no entry for {case.role!r} ({case.source})")
    return folder[case.role]


def _rglob(base: Path, pattern: str) -> list[Path]:
    """Every match, whatever it is: one that is not a readable volume file (a folder, a FIFO, a dangling link)
    is a case all the same, named as bad input when its job reads it, never left out unseen."""
    return [p for p in base.glob(pattern) if "overview" not in p.relative_to(base).parts]


def _strip_nii(name: str) -> str:
    return re.sub(r"\.nii(\.gz)?$", "", name)


LUNG = Profile("ct_window", level=-600, width=1500)


def _raw_splits(params: dict) -> list[str]:
    """The raw split folders a recipe reads: the kind's `splits` (a train conversion's: train)."""
    return list(params.get("splits", ["valid"]))


def ct_rate(base: Path, params: dict, log) -> list[Case]:
    return [
        Case(f, LUNG, {"split": split, "patient": f.parent.parent.name, "scan": f.parent.name})
        for split in _raw_splits(params)
        for f in _rglob(base, f"dataset/{split}_fixed/*/*/*_1.nii.gz")
        if f.name == f"{f.parent.name}_1.nii.gz"  # the first reconstruction of the scan its folder names
    ]


def radgenome_chestct(base: Path, params: dict, log) -> list[Case]:
    cases = []
    for split in _raw_splits(params):
        root = base / "dataset" / f"{split}_preprocessed"
        cases += [
            Case(f, LUNG, {"split": split, "path": f.parent.relative_to(root).as_posix()})
            for f in _rglob(root, "**/*_1.nii.gz")
        ]
    return cases


def cirrmri600(base: Path, params: dict, log) -> list[Case]:
    sequence = params["sequence"]  # T1 or T2
    profile = Profile("mr_contiguous", low_pct=1.0, high_pct=99.5, fraction=0.01)
    splits = read_split_csv(base / f"Cirrhosis_{sequence}_slide_folders.csv", ("folder_name",))
    found = {}
    for path in _rglob(base, f"**/Cirrhosis_{sequence}_3D/*_images/*.nii.gz"):
        found.setdefault(_strip_nii(path.name), path)
    for path in _rglob(base, f"**/{sequence}_W_Healthy/{sequence}_images/*.nii.gz"):
        found.setdefault(f"healthy_{_strip_nii(path.name)}", path)  # how the split CSV names healthy subjects
    unlisted = sorted(set(found) - set(splits), key=natural_key)
    if unlisted:
        log(f"not in the split CSV, so not sliced (as the benchmark's script drops them): {', '.join(unlisted)}")
    return [
        Case(path, profile, {"split": splits[case], "case": case}) for case, path in found.items() if case in splits
    ]


BRATS = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")


def brats_ped(base: Path, params: dict, log) -> list[Case]:
    cases = []
    for modality in ("t1n", "t2w"):
        for path in _rglob(base, f"**/BraTS-PED-*-{modality}.nii.gz"):
            training = any("TrainingData" in part for part in path.relative_to(base).parts)
            role, split = ("training", "train") if training else ("validation", "val")
            fields = {"split": split, "modality": modality, "case": path.parent.name}
            cases.append(Case(path, BRATS, fields, role))
    return cases


def brats_men(base: Path, params: dict, log) -> list[Case]:
    wanted = None
    if params.get("cases_file"):
        wanted = {line.strip() for line in (base / params["cases_file"]).read_text().splitlines() if line.strip()}
    return [
        Case(p, BRATS, {"case": p.parent.name})
        for p in _rglob(base, "**/BraTS-MEN-*-t1n.nii.gz")
        if wanted is None or p.parent.name in wanted
    ]


def hanseg(base: Path, params: dict, log) -> list[Case]:
    ct = Profile("ct_window", level=50, width=350)
    files = {"ct": ("_IMG_CT.nrrd", ct), "mr": ("_IMG_MR_T1.nrrd", BRATS)}
    return [
        Case(p, profile, {"case": p.parent.name}, role)
        for role, (suffix, profile) in files.items()
        for p in _rglob(base, f"set_1/*/*{suffix}")
        if p.name == f"{p.parent.name}{suffix}"
    ]


SYNTHRAD = {
    ("brain", "ct"): Profile("ct_window", level=40, width=80),
    ("pelvis", "ct"): Profile("ct_window", level=35, width=350),
    ("brain", "mr"): Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="floor"),
    ("pelvis", "mr"): Profile("mr_list", low_pct=1.0, high_pct=99.5, fraction=0.02, short="floor"),
}


def synthrad2023(base: Path, params: dict, log) -> list[Case]:
    return [
        Case(path, profile, {"region": region, "case": path.parent.name}, modality)
        for (region, modality), profile in SYNTHRAD.items()
        for path in _rglob(base, f"Task1/{region}/*/{modality}.nii.gz")
    ]


def mrnet(base: Path, params: dict, log) -> list[Case]:
    profile = Profile("mrnet", count=10)
    return [
        Case(p, profile, {"split": split, "plane": p.parent.name, "case": p.stem})
        for split in _raw_splits(params)
        for p in _rglob(base, f"MRNet-v1.0/{split}/*/*.npy")
        if p.parent.name in ("axial", "coronal", "sagittal")
    ]


CBCT = Profile(
    "cbct_views",
    low_pct=0.5,
    high_pct=99.5,
    count=20,
    stretch=1.2,
    views=(("axial", 2), ("coronal", 1), ("sagittal", 0)),
    span=(0.05, 0.95),
)


def mmdental(base: Path, params: dict, log) -> list[Case]:
    """One volume per case folder: <case>.nii.gz, else <case>.nii, else the folder's only NIfTI."""
    cases = []
    for folder in sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: natural_key(p.name)):
        volume = _mmdental_volume(folder, log)
        if volume is not None:
            cases.append(Case(volume, CBCT, {"case": folder.name}))
    return cases


def _mmdental_volume(folder: Path, log) -> Path | None:
    # Whatever the entries are: one that is not a readable file is named as bad input when its job reads it.
    for name in (f"{folder.name}.nii.gz", f"{folder.name}.nii"):
        if os.path.lexists(folder / name):
            return folder / name
    found = sorted(p for p in folder.iterdir() if p.name.lower().endswith(".nii.gz") or p.suffix.lower() == ".nii")
    if len(found) == 1:
        return found[0]
    what = "no NIfTI file" if not found else f"{len(found)} NIfTI files and none named {folder.name}.nii.gz"
    log(f"skipped {folder}: {what} (the benchmark's script skips such folders too)")
    return None


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
