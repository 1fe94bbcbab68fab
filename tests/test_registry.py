"""The registry lists exactly the benchmark's subsets, task files and image roots."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import added_subsets
from preprocess.errors import RegistryError
from preprocess.registry.loader import load_registry
from seed_tree import TREE_FILE, seed_layout

SEED_README = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "MedHEB-Bench-README.md"


def test_vendored_tree_is_the_seed_readme_tree():
    if not SEED_README.exists():
        pytest.skip("the seed README is not beside this checkout (only the vendored copy is)")
    assert TREE_FILE.read_text(encoding="utf-8").strip() in SEED_README.read_text(encoding="utf-8")


def test_registry_matches_seed_tree_exactly():
    seed = seed_layout()
    registry = load_registry()
    added = added_subsets()  # an extra registry folder's subsets: none but in the run with tests/data/new_subset
    assert not set(added) & set(seed["tasks"])  # an addition, never a benchmark subset
    assert {s.key: list(s.task_files) for s in registry.subsets} == {**seed["tasks"], **added}
    assert len(registry.subsets) == len(seed["tasks"]) + len(added)
    assert sum(len(s.tasks) for s in registry.subsets) == sum(map(len, [*seed["tasks"].values(), *added.values()]))
    for group in ("2D_Task", "3D_Task", "Text_Task"):
        expected = [key for key in [*seed["tasks"], *added] if key.startswith(f"{group}/")]
        assert [s.key for s in registry.subsets if s.group == group] == expected
    for group in ("2D_Task", "3D_Task"):
        roots = [s.image_root for s in registry.subsets if s.group == group and s.key not in added]
        assert roots == seed["image_roots"][group]
    assert all(s.image_root is None for s in registry.subsets if s.group == "Text_Task")


def test_examples_from_the_issue():
    registry = load_registry()
    assert registry.subset("2D_Task/Kvasir").image_root == "2D_Images/kvasir-dataset/datasets/test/"
    assert registry.subset("3D_Task/CT_RATE").image_root == "3D_Images/CT_RATE/"
    assert registry.subset("RadImageNet-VQA").task_files == ("RadLmageNet_test.json",)
    assert registry.subset("2D_Task/ChestImagrome").source_ids == ("chest_imagenome", "mimic_cxr_jpg")


def test_shared_sources_are_modelled_once():
    registry = load_registry()
    mimic_users = {s.key for s in registry.subsets if "mimic_cxr_jpg" in s.source_ids}
    assert mimic_users == {
        "2D_Task/MIMIC-CXR-Report",
        "2D_Task/MIMIC-CXR-T",
        "2D_Task/MIMIC-CXR-VQA",
        "2D_Task/ChestImagrome",
    }
    ct_rate = registry.subset("CT_RATE")
    assert [c.kind for c in ct_rate.conversions] == ["volume_slices"]  # slices and DRR from one read
    pannuke_users = {s.key for s in registry.subsets if "pannuke" in s.source_ids}
    assert pannuke_users == {"2D_Task/PanNuke", "2D_Task/PanNuke_VG"}


def test_every_source_has_what_a_user_needs():
    registry = load_registry()
    used = {s for subset in registry.subsets for s in subset.source_ids}
    assert used == set(registry.sources)
    for source in registry.sources.values():
        assert source.access in ("open", "credential-gated", "bring-your-own")
        assert source.download.startswith("https://")
        assert "<raw_root>" in source.instructions, source.id
        assert source.instructions.lstrip().startswith("1.")


def test_medmnist_md5_follows_the_chosen_size():
    assert load_registry().source("medmnist").file("bloodmnist").md5 == "b718ff6835fcbdb22ba9eacccd7b2601"
    small = load_registry(variants={"medmnist": "28"}).source("medmnist").file("bloodmnist")
    assert small.paths == ("bloodmnist.npz",)
    assert small.md5 == "7053d0359d879ad8a5505303e11de1dc"
    with pytest.raises(RegistryError, match=r"variant '32' is not one of"):
        load_registry(variants={"medmnist": "32"})


def test_ambiguous_and_unknown_names():
    registry = load_registry()
    with pytest.raises(RegistryError, match=r"ambiguous.*2D_Task/ChexpertPlus, Text_Task/ChexpertPlus"):
        registry.subset("ChexpertPlus")
    with pytest.raises(RegistryError, match=r"ambiguous.*3D_Task/MMDental, Text_Task/MMDental"):
        registry.subset("MMDental")
    with pytest.raises(RegistryError, match=r"did you mean Kvasir"):
        registry.subset("Kvasr")
    assert registry.subset("Text_Task/MMDental").is_text


def test_override_file_is_schema_checked(tmp_path):
    bad = tmp_path / "overrides.yaml"
    bad.write_text(yaml.safe_dump({"sources": {"aptos2019": {"files": [{"glob": "x/*.png"}]}}}))
    with pytest.raises(RegistryError, match=r"sources/aptos2019/files/0"):
        load_registry(bad)
    bad.write_text(yaml.safe_dump({"sources": {"aptos": {"files": []}}}))
    with pytest.raises(RegistryError, match=r"unknown source 'aptos'.*did you mean aptos2019"):
        load_registry(bad)
    bad.write_text(yaml.safe_dump({"sources": {"aptos2019": {"files": [{"path": "../train.csv"}]}}}))
    with pytest.raises(RegistryError, match=r"does not match"):
        load_registry(bad)


def test_a_misspelt_kind_parameter_fails_the_load_naming_subset_and_key(tmp_path, monkeypatch):
    import yaml

    from preprocess.registry import loader as registry_module

    document = yaml.safe_load((registry_module.REGISTRY_DIR / "subsets.yaml").read_text())
    kvasir = next(s for s in document["subsets"] if s["folder"] == "Kvasir")
    kvasir["conversions"][0]["params"]["taregt"] = kvasir["conversions"][0]["params"].pop("target")
    folder = tmp_path / "registry"
    folder.mkdir()
    for name in ("sources.yaml", "kinds.yaml", "train.yaml"):
        (folder / name).write_text((registry_module.REGISTRY_DIR / name).read_text())
    (folder / "subsets.yaml").write_text(yaml.safe_dump(document))
    monkeypatch.setattr(registry_module, "REGISTRY_DIR", folder)
    registry_module.load_kinds.cache_clear()
    expected = r"2D_Task/Kvasir/image_folder: unknown parameter 'taregt'.*did you mean.*target"
    with pytest.raises(RegistryError, match=expected):
        registry_module.load_registry()
    registry_module.load_kinds.cache_clear()
