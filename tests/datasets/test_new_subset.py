"""Adding a subset of an existing data-only kind takes registry data only: an entry in subsets.yaml, one in
sources.yaml, and the data (raw files, a task JSON). No Python file changes. tests/data/new_subset holds such
an addition as an extra registry folder (MEDHEB_EXTRA_REGISTRY), its demo data beside it. `make
test-new-subset` runs what proves that: this file (the subset built by the CLI and by the Snakemake workflow
alone, its check, validation, fingerprints and evaluation config) and every test but the workflow ones with it
present (counts, tables and lists come from the registry, so none of them changes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import REPO
from preprocess.demo import write_demo
from preprocess.errors import PreprocessError, RegistryError
from preprocess.pipeline import steps
from preprocess.pipeline.evalconfig import entries
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import EXTRA_REGISTRY_ENV, load_registry
from preprocess.verify.validate import validate_subset

NEW_SUBSET = REPO / "tests" / "data" / "new_subset"


@pytest.fixture
def extended_registry(monkeypatch):
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(NEW_SUBSET))
    return NEW_SUBSET


def _copy(tmp_path, monkeypatch):
    """A copy of the extra registry folder to edit, in use instead of the original."""
    folder = tmp_path / "extra"
    shutil.copytree(NEW_SUBSET, folder)
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(folder))
    return folder


def test_a_new_image_folder_subset_builds_validates_and_reaches_the_eval_config(tmp_path, extended_registry):
    demo = write_demo(tmp_path / "demo")  # its raw files and task JSON come from the extra folder's demo/
    base = demo / "DATA_BASEDIR"
    settings = settings_from_dict(
        {
            "raw_root": str(demo / "raw"),
            "data_basedir": str(base),
            "registry_overrides": str(demo / "registry-overrides.yaml"),
            "subsets": ["FakeDerm"],
        }
    )
    registry = settings.registry()
    shipped = load_registry(extras=False)
    assert [s.key for s in registry.subsets] == [*(s.key for s in shipped.subsets), "2D_Task/FakeDerm"]
    assert set(registry.sources) == {*shipped.sources, "fake_derm"}
    written = steps.Build(settings, registry, results=tmp_path / "results").convert(subset="FakeDerm")
    assert sorted(row[0] for row in written) == [
        "2D_Images/FakeDerm/test/melanoma/m7.png",
        "2D_Images/FakeDerm/test/nevus/n1.png",
    ]
    [report] = validate_subset(registry, registry.subset("FakeDerm"), base)
    assert report.passed and report.ok == 2
    assert entries(registry, base)["2D_Task.yaml"]["FakeDerm_cls"]["image_root"] == "2D_Images/FakeDerm/test"


def test_an_extra_folders_fakes_py_writes_its_demo_copy(tmp_path, monkeypatch):
    """An added folder may bring its demo writer as a fakes.py, found as a shipped folder's is: the demo's raw
    root then holds what its `demo` wrote (here in place of the folder's demo/raw files), and the demo's
    registry overrides list those files for the source."""
    folder = _copy(tmp_path, monkeypatch)
    shutil.rmtree(folder / "demo" / "raw")
    (folder / "fakes.py").write_text(
        "from preprocess.demo.files import put\n"
        "from preprocess.demo.images import encode, pattern\n\n\n"
        "def demo(base):\n"
        "    for n, name in enumerate(['melanoma/m7.png', 'nevus/n1.png', 'nevus/n2.png']):\n"
        "        put(base / 'images' / name, encode(pattern(n), 'PNG'))\n",
        encoding="utf-8",
    )
    demo = write_demo(tmp_path / "demo")
    written = sorted(
        p.relative_to(demo / "raw" / "fake-derm").as_posix() for p in (demo / "raw").rglob("fake-derm/**/*.png")
    )
    assert written == ["images/melanoma/m7.png", "images/nevus/n1.png", "images/nevus/n2.png"]
    overrides = yaml.safe_load((demo / "registry-overrides.yaml").read_text(encoding="utf-8"))
    assert overrides["sources"]["fake_derm"]["files"][0]["min_count"] == 3


def test_a_fakes_py_in_a_folder_of_two_sources_is_refused_naming_it(tmp_path, monkeypatch):
    folder = _copy(tmp_path, monkeypatch)
    sources = yaml.safe_load((folder / "sources.yaml").read_text(encoding="utf-8"))
    sources["sources"]["fake_derm_two"] = dict(sources["sources"]["fake_derm"], raw_dir="fake-derm-two")
    (folder / "sources.yaml").write_text(yaml.safe_dump(sources), encoding="utf-8")
    (folder / "fakes.py").write_text("def demo(base):\n    pass\n", encoding="utf-8")
    with pytest.raises(PreprocessError) as raised:
        write_demo(tmp_path / "demo")
    assert str(raised.value) == (
        f"{folder / 'fakes.py'} writes the one source of {folder / 'sources.yaml'}, which lists 2: give the folder "
        "exactly one source, or move the fakes to the folder of each"
    )


def test_an_added_folder_declares_the_subsets_the_demo_leaves_out(tmp_path, monkeypatch):
    from preprocess.demo.folders import left_out

    folder = _copy(tmp_path, monkeypatch)
    (folder / "fakes.py").write_text('DEMO_LEFT_OUT = {"2D_Task/FakeDerm": "raw missing"}\n', encoding="utf-8")
    declared = left_out()
    assert declared["2D_Task/FakeDerm"] == "raw missing" and declared["2D_Task/USData"] == "raw missing"
    assert len(declared) == 10  # the shipped folders' nine and the added one


def test_an_added_folder_declaring_another_folders_subset_is_refused_naming_it(tmp_path, monkeypatch):
    from preprocess.demo.folders import left_out

    folder = _copy(tmp_path, monkeypatch)
    (folder / "fakes.py").write_text('DEMO_LEFT_OUT = {"2D_Task/APTOS": "raw missing"}\n', encoding="utf-8")
    with pytest.raises(PreprocessError) as raised:
        left_out()
    assert str(raised.value) == (
        f"{folder / 'fakes.py'} declares 2D_Task/APTOS in DEMO_LEFT_OUT, a subset its folder's subsets.yaml does not "
        "list: declare it in the fakes.py of the folder that holds it"
    )


def test_a_new_subset_with_a_misspelt_parameter_is_refused_at_load(tmp_path, monkeypatch):
    folder = _copy(tmp_path, monkeypatch)
    text = (folder / "subsets.yaml").read_text(encoding="utf-8")
    (folder / "subsets.yaml").write_text(text.replace("target: '{parent}", "targt: '{parent}"), encoding="utf-8")
    with pytest.raises(RegistryError, match=r"2D_Task/FakeDerm/image_folder: unknown parameter 'targt'"):
        load_registry()


def test_an_extra_folder_adds_and_never_replaces(tmp_path, monkeypatch):
    folder = _copy(tmp_path, monkeypatch)
    subsets = yaml.safe_load((folder / "subsets.yaml").read_text(encoding="utf-8"))
    subsets["subsets"][0]["folder"] = "APTOS"  # a shipped subset's name
    (folder / "subsets.yaml").write_text(yaml.safe_dump(subsets), encoding="utf-8")
    with pytest.raises(RegistryError, match=r"subset '2D_Task/APTOS' is in the registry already"):
        load_registry()
    sources = yaml.safe_load((folder / "sources.yaml").read_text(encoding="utf-8"))
    sources["sources"]["aptos2019"] = sources["sources"].pop("fake_derm")
    (folder / "sources.yaml").write_text(yaml.safe_dump(sources), encoding="utf-8")
    with pytest.raises(RegistryError, match=r"source 'aptos2019' is in the registry already"):
        load_registry()
    assert "2D_Task/FakeDerm" not in {s.key for s in load_registry(extras=False).subsets}


def test_an_extra_folder_that_is_absent_or_empty_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(tmp_path / "absent"))
    with pytest.raises(RegistryError, match=rf"{EXTRA_REGISTRY_ENV} names {tmp_path / 'absent'}, which is not a"):
        load_registry()
    monkeypatch.setenv(EXTRA_REGISTRY_ENV, str(tmp_path))
    with pytest.raises(RegistryError, match=r"holds no sources.yaml 'sources' or subsets.yaml 'subsets'"):
        load_registry()


@pytest.mark.workflow
def test_the_workflow_builds_checks_validates_and_configures_the_new_subset(tmp_path, extended_registry):
    """`snakemake` with the added subset alone selected, as a user of the extra folder runs it."""
    write_demo(tmp_path / "demo")
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    done = subprocess.run(
        [*command, "--cores", "2", "--config", 'subsets=["FakeDerm"]'], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    results, base = tmp_path / "results", tmp_path / "demo" / "DATA_BASEDIR"
    raw = NEW_SUBSET / "demo" / "raw" / "fake-derm" / "images"
    # the registry's target '{parent}/{name}': the raw file's class folder and name, its bytes unchanged
    for name in ("melanoma/m7.png", "nevus/n1.png"):
        assert (base / "2D_Images" / "FakeDerm" / "test" / name).read_bytes() == (raw / name).read_bytes()
    assert (results / "check" / "sources" / "fake_derm.json").is_file()
    summary = (results / "validation" / "summary.txt").read_text(encoding="utf-8")
    assert "2D_Task/FakeDerm/FakeDerm_test.json" in summary
    assert summary.rstrip().endswith("1 of 1 task files resolve every path (0 subsets from the release, 1 built).")
    fingerprints = (results / "fingerprints.tsv").read_text(encoding="utf-8").splitlines()
    assert sum("2D_Images/FakeDerm/test/" in line for line in fingerprints) == 2
    config = yaml.safe_load((results / "eval-config" / "2D_Task.yaml").read_text(encoding="utf-8"))
    assert config["FakeDerm_cls"]["image_root"] == "2D_Images/FakeDerm/test"


@pytest.mark.whole_suite
def test_every_registry_wide_test_passes_with_the_new_subset_present(tmp_path, extended_registry):
    """The tests that take their subjects from the whole registry or count the whole demo (marker registry_wide),
    in a fresh pytest process whose registry (and that of every process it starts) holds the new subset: they
    are what an added subset could break without a code change. The workflow tests are left out: the one above
    runs Snakemake with the subset."""
    assert "2D_Task/FakeDerm" in {s.key for s in load_registry().subsets}
    log = tmp_path / "suite.log"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE"]
    command += ["-m", "registry_wide and not whole_suite and not workflow"]
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run(
            [*command, "--basetemp", str(tmp_path / "suite")],
            cwd=REPO,
            env={**os.environ, EXTRA_REGISTRY_ENV: str(NEW_SUBSET)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    lines = log.read_text(encoding="utf-8").splitlines()
    assert done.returncode == 0, "\n".join(lines[-60:])
    assert " passed" in lines[-1] and "failed" not in lines[-1] and "error" not in lines[-1], lines[-1]
