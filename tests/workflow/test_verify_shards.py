"""A subset's validation and fingerprints cut into shards (issue 42, item 4): the files their merges write are
the bytes one job writes, whatever the cut, on the demo as the workflow built it and on a copy with a missing
and a broken image."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from preprocess.pipeline.steps import Build
from preprocess.registry import layout
from preprocess.registry.config import settings_from_dict


def _cut(build: Build, subset: str, shards: int, folder: Path, manifests) -> tuple[bytes, bytes]:
    """The subset's validation report and fingerprint file made by `shards` shard jobs and their merges."""
    folder.mkdir()
    answers = [folder / f"{shard}-of-{shards}.json" for shard in range(shards)]
    prints = [folder / f"{shard}-of-{shards}.tsv" for shard in range(shards)]
    for shard in range(shards):
        build.validate_shard(subset=subset, shard=shard, shards=shards, out=answers[shard])
        build.attest(out=prints[shard], subset=subset, shard=(shard, shards))
    build.validate(subset=subset, report_out=folder / "report.json", manifests=manifests, shards=answers)
    build.merge_fingerprints(files=prints, out=folder / "fingerprints.tsv")
    return (folder / "report.json").read_bytes(), (folder / "fingerprints.tsv").read_bytes()


def _one_job(build: Build, subset: str, folder: Path, manifests) -> tuple[bytes, bytes]:
    """The same two files made as before the cut: one job each."""
    folder.mkdir()
    build.validate(subset=subset, report_out=folder / "report.json", manifests=manifests)
    build.attest(out=folder / "fingerprints.tsv", subset=subset)
    return (folder / "report.json").read_bytes(), (folder / "fingerprints.tsv").read_bytes()


@pytest.mark.workflow
def test_a_subsets_validation_and_fingerprints_are_the_same_bytes_in_one_job_or_several(
    built_demo, tmp_path, monkeypatch
):
    workdir, subset = built_demo.workdir, "2D_Task/APTOS"
    monkeypatch.chdir(workdir)  # the config's folders are relative to it, as in a job
    settings = settings_from_dict(yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8")))
    results = workdir / "results"
    build = Build(settings, results=results)
    manifests = layout.shard_manifests(results, build.registry.subset(subset))
    # the workflow cut the demo's few APTOS images into one shard of each stage, then merged it
    assert (results / "validation/shards/2D_Task/APTOS/0-of-1.json").is_file()
    assert (results / "attest/shards/2D_Task/APTOS/0-of-1.tsv").is_file()
    built = (
        (results / "validation/subsets/2D_Task/APTOS.json").read_bytes(),
        (results / "attest/2D_Task/APTOS.tsv").read_bytes(),
    )
    assert _one_job(build, subset, tmp_path / "one", manifests) == built
    assert _cut(build, subset, 3, tmp_path / "three", manifests) == built
    assert _cut(build, subset, 50, tmp_path / "fifty", manifests) == built  # more shards than images
    # every image the three task files name is listed once, and each resolves
    named = set()
    for task in ("APTOS_test.json", "APTOS_i2i_test.json", "APTOS_t2i_test.json"):
        for record in json.loads((workdir / "demo/DATA_BASEDIR/2D_Task/APTOS" / task).read_text(encoding="utf-8")):
            for field in ("qry_img_path", "tgt_img_path"):
                value = record.get(field, [])
                named.update([value] if isinstance(value, str) else value)
    lines = [line.split("\t") for line in built[1].decode().splitlines() if line.startswith("2D_Task/APTOS\t")]
    assert sorted(line[1] for line in lines) == sorted(f"2D_Images/APTOS/train_images/{name}" for name in named)
    assert {line[2] for line in lines} == {"ok"} and len(named) > 3

    # a copy of the tree with one image gone and one cut short: the failures, their suggestions and the
    # fingerprints' statuses come out the same in one job and in shards
    data = tmp_path / "data"
    shutil.copytree(workdir / "demo/DATA_BASEDIR", data, symlinks=True)
    images = data / "2D_Images/APTOS/train_images"
    gone, cut = sorted(images / name for name in named)[:2]
    gone.unlink()
    cut.write_bytes(cut.read_bytes()[:200])
    damaged = Build(settings_from_dict({**settings_values(workdir), "data_basedir": str(data)}), results=results)
    one = _one_job(damaged, subset, tmp_path / "damaged-one", manifests)
    assert _cut(damaged, subset, 4, tmp_path / "damaged-four", manifests) == one
    failures = {f["path"]: f["problem"] for file in json.loads(one[0])["files"] for f in file["failures"]}
    assert set(failures.values()) == {"missing", "unreadable"} and {gone.name, cut.name} <= set(failures)
    rows = [line.split("\t") for line in one[1].decode().splitlines() if line.startswith("2D_Task/APTOS\t")]
    statuses = {row[1]: row[2] for row in rows}
    assert statuses[f"2D_Images/APTOS/train_images/{gone.name}"] == "missing"
    assert statuses[f"2D_Images/APTOS/train_images/{cut.name}"] == "undecodable"


def settings_values(workdir: Path) -> dict:
    return yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))
