"""Recipes live in the dataset folders (recipes.yaml), shipped and extra alike (preprocess/datasets/README.md)."""

from __future__ import annotations

import pytest
import yaml

from preprocess.errors import RegistryError
from preprocess.registry.loader import DATASETS_DIR, EXTRA_REGISTRY_ENV, load_registry

SOURCE = {
    "name": "A fake VQA table (test only)",
    "homepage": "https://example.org/fake-vqa",
    "download": "https://example.org/fake-vqa/download",
    "licence": "CC BY 4.0",
    "access": "open",
    "raw_dir": "fake-vqa",
    "files": [{"id": "test", "glob": "data/test-*.parquet", "min_count": 1}],
    "instructions": "1. Download the fake VQA parquet files into <raw_root>/fake-vqa/data/.",
}
SUBSET = {
    "group": "2D_Task",
    "folder": "FakeVQA",
    "tasks": [{"file": "FakeVQA_test.json", "eval": "FakeVQA", "parser": "image_qa"}],
    "image_root": "2D_Images/FakeVQA/test_images/",
    "sources": ["fake_vqa"],
    "conversions": [
        {
            "kind": "parquet_records",
            "counts": {"test": {"items": 3, "basis": "the fake table's three rows"}},
            "params": {"dataset": "fake_vqa", "files": ["data/test-*.parquet"], "records": "test"},
        }
    ],
}


def _extra_folder(folder, recipes: dict):
    folder.mkdir()
    for name, document in (("sources", {"fake_vqa": SOURCE}), ("subsets", [SUBSET]), ("recipes", recipes)):
        (folder / f"{name}.yaml").write_text(yaml.safe_dump({name: document}), encoding="utf-8")
    return folder


def test_an_extra_folder_adds_a_recipe_its_subset_uses(tmp_path, monkeypatch):
    """A new VQA table whose image column is named otherwise: a recipe of an existing kind, in its own folder,
    with the code of a shipped one; it follows the shipped recipes of its kind and resolves as a job resolves it."""
    from preprocess.convert import recordmatch
    from preprocess.convert.base import ConversionContext

    recipe = {"image": "picture", "columns": ["question", "answer"], "code": "preprocess.convert.recordmatch:plain_row"}
    extra = _extra_folder(tmp_path / "fake_vqa", {"parquet_records": {"fake_vqa": recipe}})
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(extra))
    registry = load_registry()
    assert list(registry.kinds["parquet_records"].recipes) == [
        "medpix_clinqa",
        "radimagenet_benchmark",
        "radimagenet_alignment",
        "pathvqa",
        "vqa_rad",
        "fake_vqa",
    ]
    subset = registry.subset("FakeVQA")
    resolved = ConversionContext(registry, None, subset, subset.conversions[0]).recipe
    assert resolved == {"image": "picture", "columns": ["question", "answer"], "code": recordmatch.plain_row}
    assert "fake_vqa" not in load_registry(extras=False).kinds["parquet_records"].recipes


def test_a_recipe_declared_twice_or_of_an_unknown_kind_is_refused_naming_the_files(tmp_path, monkeypatch):
    recipe = {"image": "image", "columns": ["question", "answer"], "code": "preprocess.convert.recordmatch:plain_row"}
    extra = _extra_folder(tmp_path / "fake_vqa", {"parquet_records": {"fake_vqa": recipe, "pathvqa": recipe}})
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(extra))
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        f"{tmp_path}/fake_vqa/recipes.yaml: recipe 'pathvqa' of kind parquet_records is declared in "
        f"{DATASETS_DIR}/pathvqa/recipes.yaml already; a folder adds recipes, it never replaces one "
        "(give it another name)"
    )
    (extra / "recipes.yaml").write_text(yaml.safe_dump({"recipes": {"volume_slice": {"fake_vqa": recipe}}}))
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        f"{tmp_path}/fake_vqa/recipes.yaml: recipes of unknown conversion kind 'volume_slice' "
        "(did you mean volume_slices?)"
    )
    (extra / "recipes.yaml").write_text(yaml.safe_dump({"recipes": {"parquet_records": {"fake_vqa": "plain_row"}}}))
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        f"{tmp_path}/fake_vqa/recipes.yaml does not match recipes.schema.yaml:\n"
        "  at recipes/parquet_records/fake_vqa: 'plain_row' is not of type 'object'"
    )
