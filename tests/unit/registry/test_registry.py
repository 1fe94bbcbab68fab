"""The registry lists exactly the benchmark's subsets, task files and image roots."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from conftest import DATA, REPO, added_subsets
from preprocess.errors import RegistryError
from preprocess.registry.loader import load_registry
from seed_tree import TREE_FILE, seed_layout

pytestmark = pytest.mark.registry_wide  # an added subset must pass it: make test-new-subset

SEED_README = REPO.parent / "shared" / "seeds" / "MedHEB-Bench-README.md"


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


def test_a_misspelt_kind_parameter_fails_the_load_naming_subset_and_key(registry_copy):
    def misspell(document: dict) -> None:
        kvasir = next(s for s in document["subsets"] if s["folder"] == "Kvasir")
        kvasir["conversions"][0]["params"]["taregt"] = kvasir["conversions"][0]["params"].pop("target")

    registry_copy("datasets/kvasir_v2/subsets.yaml", misspell)
    expected = r"2D_Task/Kvasir/image_folder: unknown parameter 'taregt'.*did you mean.*target"
    with pytest.raises(RegistryError, match=expected):
        load_registry()


# --- one folder per dataset, the shape of an extra registry folder, read by the same code ----------------------

NEW_SUBSET = DATA / "new_subset"  # an extra folder (tests/datasets/test_new_subset.py)


def test_the_shipped_subsets_load_from_one_folder_per_dataset():
    """A folder per source, named by it and holding it alone, with the subsets whose first source it is: the
    folders hold every subset of the seed tree (docs: preprocess/datasets/README.md)."""
    from preprocess.registry.loader import DATASETS_DIR, dataset_dirs

    registry = load_registry(extras=False)
    folders = dataset_dirs()
    assert [f.name for f in folders] == list(registry.sources)
    keys = []
    for folder in folders:
        sources = yaml.safe_load((folder / "sources.yaml").read_text(encoding="utf-8"))
        assert list(sources) == ["sources"] and list(sources["sources"]) == [folder.name]
        if (folder / "subsets.yaml").exists():
            subsets = yaml.safe_load((folder / "subsets.yaml").read_text(encoding="utf-8"))
            assert list(subsets) == ["subsets"] and subsets["subsets"]
            keys += [f"{raw['group']}/{raw['folder']}" for raw in subsets["subsets"]]
            assert {registry.subset(key).source_ids[0] for key in keys[-len(subsets["subsets"]) :]} == {folder.name}
    assert sorted(keys) == sorted(seed_layout()["tasks"]) == sorted(s.key for s in registry.subsets)
    # a subset of several sources sits in its first one's folder (Gastrointestinal reads MedSegBench's too)
    text = (DATASETS_DIR / "kvasir_seg" / "subsets.yaml").read_text(encoding="utf-8")
    assert "folder: Gastrointestinal" in text and registry.subset("Gastrointestinal").source_ids[:2] == (
        "kvasir_seg",
        "medsegbench",
    )
    medsegbench = yaml.safe_load((DATASETS_DIR / "medsegbench" / "subsets.yaml").read_text(encoding="utf-8"))
    assert [raw["folder"] for raw in medsegbench["subsets"]] == ["SkinLesion", "UltrasoundNerve"]
    assert [s.key for s in registry.subsets][:3] == ["2D_Task/APTOS", "2D_Task/BloodMNIST", "2D_Task/Brain-Tumor-MRI"]
    assert list(registry.sources)[:4] == ["medmnist", "medmnist3d", "medsegbench", "mimic_cxr_jpg"]


def test_an_extra_folder_shipped_as_a_dataset_folder_loads_the_same_in_the_shipped_order(registry_copy, monkeypatch):
    """tests/data/new_subset copied into the datasets: the same entries; its subset sorted among the shipped ones
    (2D_Task, by folder ignoring case), its source after those order.yaml lists; as an extra, both come last."""
    from preprocess.registry import loader

    monkeypatch.setenv(loader.EXTRA_REGISTRY_ENV, str(NEW_SUBSET))
    as_extra = load_registry()
    assert [s.key for s in as_extra.subsets][-1] == "2D_Task/FakeDerm" and list(as_extra.sources)[-1] == "fake_derm"
    folder = loader.DATASETS_DIR / "fake_derm"
    folder.mkdir()
    for name in ("sources.yaml", "subsets.yaml"):
        shutil.copy(NEW_SUBSET / name, folder / name)
    shipped = load_registry(extras=False)
    keys = [s.key for s in shipped.subsets]
    assert keys[keys.index("2D_Task/FakeDerm") - 1 : keys.index("2D_Task/FakeDerm") + 2] == [
        "2D_Task/DermaMNIST",
        "2D_Task/FakeDerm",
        "2D_Task/Gastrointestinal",
    ]
    assert list(shipped.sources)[-2:] == ["publichealthqa", "fake_derm"]
    assert shipped.subset("FakeDerm") == as_extra.subset("FakeDerm")
    assert shipped.source("fake_derm") == as_extra.source("fake_derm")
    with pytest.raises(RegistryError, match=r"new_subset/sources.yaml: source 'fake_derm' is in the registry already"):
        load_registry()  # an extra folder adds, never replaces: a shipped dataset folder's source included


def test_an_order_naming_no_folder_is_refused_naming_the_file(registry_copy):
    from preprocess.registry import loader

    registry_copy("datasets/order.yaml", lambda document: document["order"].insert(1, "medmnsit"))
    with pytest.raises(RegistryError) as raised:
        load_registry(extras=False)
    assert str(raised.value).startswith(f"{loader.DATASETS_DIR / 'order.yaml'}: order names each folder of ")
    assert str(raised.value).endswith(", not ['medmnsit']")


def test_the_package_ships_the_dataset_folders(tmp_path):
    """The wheel holds every dataset folder's YAML, and the registry loads from the installed files alone."""
    import subprocess
    import sys
    import zipfile

    from conftest import REPO

    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "preprocess", tmp_path / "preprocess", ignore=shutil.ignore_patterns("__pycache__"))
    snippet = "from setuptools import build_meta; print(build_meta.build_wheel('wheel'))"
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [wheel] = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "installed")
    from preprocess.registry.loader import DATASETS_DIR

    shipped = sorted(f"preprocess/datasets/{path.relative_to(DATASETS_DIR)}" for path in DATASETS_DIR.glob("*/*.yaml"))
    in_folders = [n for n in sorted(names) if n.startswith("preprocess/datasets/") and n.count("/") == 3]
    assert [n for n in in_folders if n.endswith(".yaml")] == shipped
    assert "preprocess/datasets/ct_rate/fakes.py" in in_folders  # the folder's fake writers too
    assert "preprocess/datasets/order.yaml" in names and "preprocess/datasets/ct_rate/subsets.yaml" in names
    count = (
        "import preprocess; from preprocess.registry.loader import load_registry as load; r = load(extras=False); "
        "print(preprocess.__file__, len(r.subsets), len(r.sources))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}  # before the editable install's finder
    done = subprocess.run(
        [sys.executable, "-c", count], cwd=tmp_path / "wheel", capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    folders = len(list(DATASETS_DIR.glob("*/sources.yaml")))
    assert done.stdout.split() == [
        str(tmp_path / "installed" / "preprocess" / "__init__.py"),
        *map(str, (len(seed_layout()["tasks"]), folders)),
    ]


# --- recipes: declared once, in a dataset folder's recipes.yaml, and checked when the registry loads -----------


def _set_param(folder: str, conversion: int, key: str, value):
    def change(document: dict) -> None:
        subset = next(s for s in document["subsets"] if s["folder"] == folder)
        subset["conversions"][conversion]["params"][key] = value

    return change


MISSPELT_RECIPES = [
    (
        "CT_RATE",
        "ct_rate",
        "dataset",
        "ct_ratee",
        "3D_Task/CT_RATE/volumes: unknown recipe 'ct_ratee' of kind volume_slices in parameter 'dataset' "
        "(did you mean ct_rate?) (its recipes: brats_ped, brats_men, ct_rate, radgenome_chestct, cirrmri600, hanseg, "
        "synthrad2023, mrnet, mmdental)",  # the folders' order (datasets/order.yaml)
    ),
    (
        "VindrCXR",
        "vindr_cxr",
        "recipe",
        "vindr_cxrr",
        "2D_Task/VindrCXR/annotation_crop: unknown recipe 'vindr_cxrr' of kind annotation_crop in parameter 'recipe' "
        "(did you mean vindr_cxr?) (its recipes: chest_imagenome_gold, chest_imagenome_silver, vindr_cxr, vindr_mammo, "
        "vindr_mammo_physionet)",
    ),
    (
        "ROCO-VQA",
        "roco_qa",
        "dataset",
        "roco_qaa",
        "2D_Task/ROCO-VQA/parquet_extract: unknown recipe 'roco_qaa' of kind parquet_extract in parameter 'dataset' "
        "(did you mean roco_qa?) (its recipes: pannuke_classification, roco_qa)",
    ),
    (
        "PathVQA",
        "pathvqa",
        "dataset",
        "pathvqaa",
        "2D_Task/PathVQA/parquet_records: unknown recipe 'pathvqaa' of kind parquet_records in parameter 'dataset' "
        "(did you mean pathvqa?) (its recipes: medpix_clinqa, radimagenet_benchmark, radimagenet_alignment, pathvqa, "
        "vqa_rad)",
    ),
    (  # the train twin's recipe is checked as well, by the parameter the subset writes
        "RadImageNet-VQA",
        "radimagenet_vqa",
        "train_dataset",
        "radimagenet_alignmnt",
        "2D_Task/RadImageNet-VQA/parquet_records: unknown recipe 'radimagenet_alignmnt' of kind parquet_records in "
        "parameter 'train_dataset' (did you mean radimagenet_alignment, radimagenet_benchmark?) (its recipes: "
        "medpix_clinqa, radimagenet_benchmark, radimagenet_alignment, pathvqa, vqa_rad)",
    ),
    (
        "PMC",
        "pmc_vqa",
        "dataset",
        "pmc_vq",
        "2D_Task/PMC/archive_extract: unknown recipe 'pmc_vq' of kind archive_extract in parameter 'dataset' "
        "(did you mean pmc_vqa?) (its recipes: pmc_vqa, omnimedvqa)",
    ),
    (
        "Gastrointestinal",
        "kvasir_seg",
        "dataset",
        "kvasir_segg",
        "2D_Task/Gastrointestinal/kvasir_seg: unknown recipe 'kvasir_segg' of kind mask_bbox_crop in parameter "
        "'dataset' (did you mean kvasir_seg?) (its recipes: medsegbench, kvasir_seg, pannuke)",
    ),
]


@pytest.mark.parametrize(
    ("folder", "dataset", "key", "name", "expected"), MISSPELT_RECIPES, ids=[m[0] for m in MISSPELT_RECIPES]
)
def test_a_misspelt_recipe_fails_the_load_naming_subset_kind_parameter_and_name(
    registry_copy, folder, dataset, key, name, expected
):
    registry_copy(f"datasets/{dataset}/subsets.yaml", _set_param(folder, 0, key, name))
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == expected


def test_every_recipe_of_a_variant_dict_is_checked(registry_copy):
    from preprocess.convert.annotation_crop import VINDR_MAMMO, VINDR_MAMMO_PHYSIONET
    from preprocess.convert.base import ConversionContext

    # the shipped dict passes, and each variant takes its own recipe
    for variant, code in (("derived", VINDR_MAMMO), ("physionet", VINDR_MAMMO_PHYSIONET)):
        registry = load_registry(variants={"vindr_mammo": variant})
        subset = registry.subset("VindrMammo")
        assert subset.conversions[0].params["recipe"] == {
            "derived": "vindr_mammo",
            "physionet": "vindr_mammo_physionet",
        }
        assert ConversionContext(registry, None, subset, subset.conversions[0]).recipe["code"] is code
    # a misspelt value is refused whichever variant is chosen (here: the default one, derived, is spelt right)
    misspelt = {"derived": "vindr_mammo", "physionet": "vindr_mammo_physonet"}
    registry_copy("datasets/vindr_mammo/subsets.yaml", _set_param("VindrMammo", 0, "recipe", misspelt))
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        "2D_Task/VindrMammo/annotation_crop: unknown recipe 'vindr_mammo_physonet' of kind annotation_crop in "
        "parameter 'recipe/physionet' (did you mean vindr_mammo_physionet, vindr_mammo?) (its recipes: "
        "chest_imagenome_gold, chest_imagenome_silver, vindr_cxr, vindr_mammo, vindr_mammo_physionet)"
    )


def test_a_parameter_a_recipe_requires_is_checked_at_load(registry_copy):
    def drop_flag(document: dict) -> None:
        subset = next(s for s in document["subsets"] if s["folder"] == "Gastrointestinal")
        del subset["conversions"][1]["params"]["flag"]

    registry_copy("datasets/kvasir_seg/subsets.yaml", drop_flag)
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        "2D_Task/Gastrointestinal/polypgen: recipe 'medsegbench' of kind mask_bbox_crop (dataset) "
        "needs parameter 'flag'"
    )


def test_a_recipe_requiring_a_parameter_its_kind_lacks_is_refused(registry_copy, tmp_path):
    registry_copy(
        "datasets/cirrmri600/recipes.yaml",
        lambda d: d["recipes"]["volume_slices"]["cirrmri600"].update(requires=["sequnce"]),
    )
    with pytest.raises(RegistryError) as raised:
        load_registry()
    assert str(raised.value) == (
        f"{tmp_path}/preprocess/datasets/cirrmri600/recipes.yaml: recipe cirrmri600 of kind volume_slices requires "
        "'sequnce', none of its params (did you mean sequence, source?)"
    )


def test_every_recipe_resolves_to_its_code_and_cost():
    """Each recipe the dataset folders declare is one a subset uses (under some source variant), and each one a subset
    uses resolves as its job resolves it, its code imported, and has a per-item cost (`python -m preprocess
    plan`)."""
    from preprocess.convert.base import ConversionContext
    from preprocess.convert.parquet_extract import NAMING_RULES
    from preprocess.registry.loader import DATASETS_DIR
    from preprocess.sizing.costs import cost_of, load_costs

    shipped = load_registry()
    sources = {  # as written, before a variant is chosen
        source_id: raw
        for path in DATASETS_DIR.glob("*/sources.yaml")
        for source_id, raw in yaml.safe_load(path.read_text(encoding="utf-8"))["sources"].items()
    }
    choices = {source_id: raw["variant"]["choices"] for source_id, raw in sources.items() if "variant" in raw}
    routed = {  # sources whose variant picks the recipe ({variant: name}): every variant of each is loaded
        conversion.params.get("source") or subset.source_ids[0]
        for subset in shipped.subsets
        for conversion in subset.conversions
        if isinstance(conversion.params.get(shipped.kinds[conversion.kind].recipe_param or ""), dict)
    }
    assert routed == {"vindr_mammo"}
    used = {name: set() for name, kind in shipped.kinds.items() if kind.recipes}
    for chosen in [{}] + [{source: variant} for source in sorted(routed) for variant in choices[source]]:
        registry = load_registry(variants=chosen)
        for subset in registry.subsets:
            for conversion in (twin for entry in subset.conversions for twin in entry.twins()):
                kind = registry.kinds[conversion.kind]
                if not kind.recipes:
                    continue
                name = conversion.params[kind.recipe_param]
                if isinstance(name, dict):
                    name = name[registry.source(conversion.params.get("source") or subset.source_ids[0]).variant]
                used[kind.name].add(name)
                recipe = ConversionContext(registry, None, subset, conversion).recipe
                if "code" in recipe:
                    assert callable(recipe["code"]) or hasattr(recipe["code"], "plan"), (kind.name, name)
                else:  # data only (parquet_extract): its naming rule is the code
                    assert recipe["rule"] in NAMING_RULES, (kind.name, name)
                cost_of(registry, subset, conversion, load_costs())
    assert used == {name: set(shipped.kinds[name].recipes) for name in used}
