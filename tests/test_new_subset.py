"""Adding a subset of an existing data-only kind takes registry data only: an entry in subsets.yaml, one in
sources.yaml, and the data (raw files, a task JSON). No Python file changes."""

from __future__ import annotations

import json

import pytest

from preprocess.checks.validate import validate_subset
from preprocess.demo.images import encode, pattern
from preprocess.pipeline import steps
from preprocess.pipeline.evalconfig import entries
from preprocess.registry import loader as registry_module
from preprocess.registry.config import settings_from_dict

SOURCE = """
  fake_derm:
    name: A fake dermoscopy set (test only)
    homepage: https://example.org/fake-derm
    download: https://example.org/fake-derm/download
    licence: CC BY 4.0
    access: open
    raw_dir: fake-derm
    files:
      - {id: images, glob: "images/*/*.png", min_count: 2}
    instructions: |
      1. Download the fake dermoscopy archive.
      2. Unzip it into <raw_root>/fake-derm/ (images/<class>/<id>.png).
"""
SUBSET = """
- group: 2D_Task
  folder: FakeDerm
  tasks:
  - {file: FakeDerm_test.json, eval: FakeDerm_cls, parser: image_cls}
  image_root: 2D_Images/FakeDerm/test/
  sources: [fake_derm]
  conversions:
  - kind: image_folder
    params:
      sources: [images/*/*.png]
      target: '{parent}/{name}'
"""


@pytest.fixture
def extended_registry(tmp_path, monkeypatch):
    folder = tmp_path / "registry"
    folder.mkdir()
    for name in ("kinds.yaml", "sources.yaml", "subsets.yaml", "train.yaml"):
        (folder / name).write_text((registry_module.REGISTRY_DIR / name).read_text(encoding="utf-8"))
    with open(folder / "sources.yaml", "a", encoding="utf-8") as handle:
        handle.write(SOURCE)
    with open(folder / "subsets.yaml", "a", encoding="utf-8") as handle:
        handle.write(SUBSET)
    monkeypatch.setattr(registry_module, "REGISTRY_DIR", folder)
    return folder


def test_a_new_image_folder_subset_builds_validates_and_reaches_the_eval_config(tmp_path, extended_registry):
    raw, base = tmp_path / "raw", tmp_path / "DATA_BASEDIR"
    for number, name in enumerate(("nevus/n1.png", "melanoma/m7.png")):
        (raw / "fake-derm" / "images" / name).parent.mkdir(parents=True, exist_ok=True)
        (raw / "fake-derm" / "images" / name).write_bytes(encode(pattern(number), "PNG"))
    task = base / "2D_Task" / "FakeDerm" / "FakeDerm_test.json"
    task.parent.mkdir(parents=True)
    record = {"qry_inst": "<|image_1|> Classify:", "qry_text": "", "tgt_text": ["nevus", "melanoma"]}
    task.write_text(
        json.dumps([{**record, "qry_img_path": "nevus/n1.png"}, {**record, "qry_img_path": "melanoma/m7.png"}])
    )
    settings = settings_from_dict({"raw_root": str(raw), "data_basedir": str(base), "subsets": ["FakeDerm"]})
    registry = settings.registry()
    assert len(registry.subsets) == 57
    written = steps.Build(settings, registry, results=tmp_path / "results").convert(subset="FakeDerm")
    assert sorted(row[0] for row in written) == [
        "2D_Images/FakeDerm/test/melanoma/m7.png",
        "2D_Images/FakeDerm/test/nevus/n1.png",
    ]
    [report] = validate_subset(registry, registry.subset("FakeDerm"), base)
    assert report.passed and report.ok == 2
    assert entries(registry, base)["2D_Task.yaml"]["FakeDerm_cls"]["image_root"] == "2D_Images/FakeDerm/test"


def test_a_new_subset_with_a_misspelt_parameter_is_refused_at_load(tmp_path, extended_registry):
    text = (extended_registry / "subsets.yaml").read_text(encoding="utf-8")
    head, tail = text.rsplit("      target: '{parent}", 1)  # the new subset's entry, at the end
    (extended_registry / "subsets.yaml").write_text(head + "      targt: '{parent}" + tail)
    with pytest.raises(
        registry_module.RegistryError, match=r"2D_Task/FakeDerm/image_folder: unknown parameter 'targt'"
    ):
        registry_module.load_registry()
