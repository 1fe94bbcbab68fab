"""Every full-download count of the shipped registry (subsets.yaml `counts: {split: {items, basis}}`) says how
exact it is and where it comes from (issue 52): its basis starts with one of the kinds below, then a colon,
and names a public source (an address, a paper, a dataset card or viewer, a file list) or says that it is
inferred. The project's own notes and files (sources.yaml, the raw-formats notes, costs.yaml, a test) are no
source: a basis citing only them fails."""

from __future__ import annotations

import re

import pytest
import yaml

from preprocess.registry.loader import DATASETS_DIR

# how exact the figure is; "exact, by construction": a count the conversion defines itself (one item a link)
KINDS = ("exact", "an upper bound", "a lower bound", "an estimate", "not known")
KIND = re.compile(rf"^(?:{'|'.join(KINDS)})(?:, (?:by construction|inferred))?: ")
# references to the project's own files and notes, no public source
OWN = re.compile(r"raw-formats/\S+|REFERENCE\.md[^;,)]*|sources\.yaml[^;,)]*|costs\.yaml|\S*test_\w+\.py|the issue")
PUBLIC = re.compile(
    r"https?://|\b[\w-]+(?:\.[\w-]+)*\.(?:org|com|io|cn|de|no|edu)\b|arXiv \d{4}\.\d{4,5}|\bpaper\b|\bcard\b"
    r"|README|dataset_info|\bviewer\b|\b[\w-]+/[\w.-]+ \S+\.py\b|\b\w[\w.-]*\.(?:csv|json|txt|npz|parquet)\b"
)
SAYS_SO = re.compile(r"\binferred\b|\bby construction\b")


def basis_problem(basis: str) -> str | None:
    """What a basis lacks (None: nothing): its kind at the start, or a public source or the word inferred."""
    if not KIND.match(basis):
        return f"does not start with how exact it is ({', '.join(KINDS)}, then a colon)"
    rest = OWN.sub("", basis)
    if not PUBLIC.search(rest) and not SAYS_SO.search(rest):
        return "names no public source (an address, a paper, a card or viewer, a file list) and does not say inferred"
    return None


def _bases() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(DATASETS_DIR.glob("*/subsets.yaml")):
        for subset in yaml.safe_load(path.read_text(encoding="utf-8"))["subsets"]:
            for conversion in subset.get("conversions", []):
                for split, count in conversion.get("counts", {}).items():
                    where = f"{path.parent.name}/subsets.yaml {subset['group']}/{subset['folder']} {split}"
                    found.append((where, count["items"], count["basis"]))
    return found


def test_every_basis_names_a_public_source_and_how_exact_it_is():
    bases = _bases()
    assert len(bases) > 60  # every dataset folder's counts were read
    problems = [f"{where}: {problem}: {basis!r}" for where, _, basis in bases if (problem := basis_problem(basis))]
    assert not problems, "\n".join(problems)


def test_a_not_known_count_is_the_stand_in_of_one():
    unknown = {where: items for where, items, basis in _bases() if basis.startswith("not known")}
    assert unknown == {"usdata/subsets.yaml 2D_Task/USData test": 1, "m3d_cap/subsets.yaml 3D_Task/M3D test": 1}


@pytest.mark.parametrize(
    "basis",
    [
        "VinDr-CXR 1.0.0: 3,000 test DICOMs (physionet.org/content/vindr-cxr/1.0.0/)",  # how exact: not said
        "exact: 3,000 test DICOMs (sources.yaml min_count)",  # only the project's own file
        "an upper bound: all 1,000 (raw-formats/2d-images.md section 4)",  # only the project's notes
        "the README's full-count run (tests/unit/sizing/test_plan.py's synthetic raw root)",
        "about: the Test split's rows",  # "about" is no kind: an estimate says it
    ],
)
def test_a_basis_that_does_neither_fails(basis):
    assert basis_problem(basis) is not None


@pytest.mark.parametrize(
    "basis",
    [
        "exact: MRNet v1.0 training set, 1,130 exams (stanfordmlgroup.github.io/competitions/mrnet)",
        "a lower bound, inferred: at least 1,000 volumes (the registry's check count)",
        "exact, by construction: one item per link of `links`",
        "exact: the 1,000 images of gold_bbox_coordinate_annotations_1000images.csv (its file name)",
        "an estimate: 99 training cases (the challenge's results paper, arXiv 2407.08855)",
    ],
)
def test_a_basis_with_its_kind_and_source_passes(basis):
    assert basis_problem(basis) is None
