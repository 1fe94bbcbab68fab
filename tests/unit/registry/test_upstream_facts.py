"""The registry's figures, links and licences against what the upstreams publish (issue 52). The tables below
are written by hand from the evidence (the upstreams' pages, papers, code and issue threads; docs/guide/
real-data.md, "Figures that rest on inference", lists the inferred ones), never read from the registry: a
change of a count, a link or a licence in sources.yaml or subsets.yaml fails here until this file is changed
too, so that every such edit is a visible decision."""

from __future__ import annotations

import pytest

from preprocess.registry.loader import load_registry
from preprocess.reports.listing import subset_text

# (subset, conversion, split): items, with where the figure comes from
COUNTS = {
    # 1,564 validation scans of 1,304 patients (CT-CLIP issue 19), one `_1` reconstruction a scan
    ("3D_Task/CT_RATE", "volumes", "test"): 1564,
    # 25,692 scans (the paper's abstract) less 1,564: 24,128 train scans
    ("3D_Task/CT_RATE", "volumes", "train"): 24128,
    # 120 validation and 1,130 training exams (the MRNet competition page), three planes each
    ("3D_Task/MRNet", "volume_slices", "test"): 360,
    ("3D_Task/MRNet", "volume_slices", "train"): 3390,
    # Test at most 8,179 rows (the author's QA JSON before cleaning); Vaild 8,175 plus ROCO-QA-Train's 65.4k
    ("2D_Task/ROCO-VQA", "parquet_extract", "test"): 8179,
    ("2D_Task/ROCO-VQA", "parquet_extract", "train"): 73575,
    # no count published: the stand-in of one
    ("2D_Task/USData", "image_folder", "test"): 1,
    ("3D_Task/M3D", "image_folder", "test"): 1,
    # the medsegbench package's INFO n_samples: test, and train + val
    ("2D_Task/SkinLesion", "isic2018", "test"): 1000,
    ("2D_Task/SkinLesion", "isic2018", "train"): 2594 + 100,
    ("2D_Task/SkinLesion", "uwaterloo", "test"): 44,
    ("2D_Task/SkinLesion", "uwaterloo", "train"): 143 + 19,
    ("2D_Task/UltrasoundNerve", "nerve", "test"): 449,
    ("2D_Task/UltrasoundNerve", "nerve", "train"): 1651 + 223,
    ("2D_Task/UltrasoundNerve", "kidney", "test"): 918,
    ("2D_Task/UltrasoundNerve", "kidney", "train"): 3210 + 458,
    ("2D_Task/Gastrointestinal", "polypgen", "test"): 288,
    ("2D_Task/Gastrointestinal", "polypgen", "train"): 984 + 140,
    # 242,072 frontal images with scene graphs (the PhysioNet abstract); the gold CSV's 1,000 images
    ("2D_Task/ChestImagrome", "silver_crops", "train"): 242072,
    ("2D_Task/ChestImagrome", "gold_crops", "test"): 1000,
    # VinDr-CXR 15,000 / 3,000 (its PhysioNet abstract); VinDr-Mammo 4,000 / 1,000 four-view exams
    ("2D_Task/VindrCXR", "annotation_crop", "test"): 3000,
    ("2D_Task/VindrCXR", "annotation_crop", "train"): 15000,
    ("2D_Task/VindrMammo", "annotation_crop", "test"): 4 * 1000,
    ("2D_Task/VindrMammo", "annotation_crop", "train"): 4 * 4000,
    # the RadImageNet-VQA card: benchmark 1,000 images; alignment train 750,009 rows
    ("2D_Task/RadImageNet-VQA", "parquet_records", "test"): 1000,
    ("2D_Task/RadImageNet-VQA", "parquet_records", "train"): 750009,
}

# source: (access, what the licence must say, what the download link must say)
ACCESS = {
    "usdata": ("open", ("research use",), "drive.google.com/file/d/1-Fz9J58ntoO8ZoAEKzm3fxm4jvOWrAuz"),
    "m3d_cap": ("bring-your-own", ("Apache-2.0",), "M3D_Cap/ct_quizze"),
    "vindr_cxr": ("credential-gated", ("PhysioNet Credentialed Health Data License 1.5.0",), "physionet.org"),
    # its default download is a derived PNG copy (the variant `derived`); the homepage is PhysioNet's
    "vindr_mammo": ("credential-gated", ("PhysioNet Restricted Health Data License 1.5.0",), "vindr-mammo"),
    "radimagenet_vqa": ("credential-gated", ("Apache-2.0", "Research Use Agreement", "non-commercial"), "raidium"),
    "chest_imagenome": ("credential-gated", ("PhysioNet Credentialed Health Data License 1.5.0",), "physionet.org"),
}

# (source, file id): the check's min_count, a lower bound of a full copy
MIN_COUNTS = {
    ("ct_rate", "volumes"): 1304,  # validation patients: every one has at least one scan
    ("ct_rate", "train_volumes"): 20000,  # train patients
    ("mrnet", "axial"): 120,
    ("mrnet", "train_axial"): 1130,
    ("mrnet", "train_sagittal"): 1130,
}


@pytest.fixture(scope="module")
def registry():
    return load_registry(extras=False)


@pytest.mark.parametrize(("where", "items"), COUNTS.items(), ids=["/".join(key) for key in COUNTS])
def test_each_count_is_the_upstreams(registry, where, items):
    subset, name, split = where
    conversion = next(c for c in registry.subset(subset).conversions if c.name == name)
    assert conversion.counts[split]["items"] == items


@pytest.mark.parametrize(("source_id", "expected"), ACCESS.items(), ids=list(ACCESS))
def test_access_licence_and_link_are_the_upstreams(registry, source_id, expected):
    access, licence, link = expected
    source = registry.source(source_id)
    assert source.access == access
    assert all(words in source.licence for words in licence), source.licence
    assert link in source.download


def test_vindr_cxr_is_credentialed_not_restricted(registry):
    assert "Restricted" not in registry.source("vindr_cxr").licence  # VinDr-Mammo is the restricted one


def test_m3d_caps_link_and_glob_name_the_same_folder(registry):
    source = registry.source("m3d_cap")
    assert "ct_case" not in source.download and "/ct_quizze/" in source.file("slices").glob


@pytest.mark.parametrize(("where", "count"), MIN_COUNTS.items(), ids=["/".join(key) for key in MIN_COUNTS])
def test_each_check_count_is_a_lower_bound_of_the_upstreams(registry, where, count):
    source_id, file_id = where
    assert registry.source(source_id).file(file_id).min_count == count


def test_roco_qas_valid_shards_are_marked_unpublished(registry):
    source = registry.source("roco_qa")
    marked = {spec.id for spec in source.files if spec.unpublished}
    assert marked == {"valid_1", "valid_0"}  # named only by the benchmark's unzip.py
    train = source.file("train")
    assert train.shards and "Train-" in train.glob  # ROCO-QA-Train's 26 shards are read as one set


def test_chest_imagenomes_project_folder(registry):
    assert registry.source("chest_imagenome").project_folder == "chest-imagenome-dataset-1.0.0"


@pytest.mark.parametrize(
    ("subset", "shown"),
    [
        (
            "2D_Task/USData",
            ["access: open", "download: https://drive.google.com/file/d/1-Fz9J58ntoO8ZoAEKzm3fxm4jvOWrAuz"],
        ),
        ("3D_Task/M3D", ["access: bring-your-own", "M3D_Cap/ct_quizze", "test split: 1 item (not known"]),
        ("2D_Task/VindrCXR", ["licence: PhysioNet Credentialed Health Data License 1.5.0"]),
        ("2D_Task/RadImageNet-VQA", ["Research Use Agreement: non-commercial research use only"]),
        ("3D_Task/CT_RATE", ["test split: 1,564 items (an estimate", "train split: 24,128 items (an estimate"]),
        ("3D_Task/MRNet", ["train split: 3,390 items (exact"]),
    ],
)
def test_info_subset_shows_access_licence_download_and_counts(registry, subset, shown):
    text = subset_text(registry, registry.subset(subset))
    assert all(line in text for line in shown), text
