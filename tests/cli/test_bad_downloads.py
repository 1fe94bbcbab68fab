"""`medheb download release` with what it did not write at its temporary names, and a listing that is no tree
(issue 53, cases 10 and 13), against the local stand-in of the Hub (tests/hubserver.py). A user's `X.part` is
never touched (the download's own temporary is `.X.medheb-download.part`); a file at that name that no
download of ours started is refused, named and kept; a listing that names a path both as a file and as a
folder, or lists a name of the pipeline's own temporaries, is refused before anything is fetched."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hubserver import COMMIT, Site, serve
from test_release_download import RELEASE, SAMPLE, TASKS, TRAIN, _run, _tree

APTOS_TEST = "2D_Task/APTOS/APTOS_test.json"


@pytest.fixture
def hub():
    site = Site(repos={SAMPLE: dict(RELEASE)})
    with serve(site) as url:
        yield site, url


@pytest.fixture
def data(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def _own_part(data: Path, path: str) -> Path:
    target = data / path
    return target.with_name(f".{target.name}.medheb-download.part")


def test_a_users_part_file_beside_a_listed_file_is_never_touched(hub, data, tmp_path):
    _, url = hub
    mine = data / (APTOS_TEST + ".part")
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"my notes, nothing of the release's")
    done = _run(tmp_path, url)
    assert done.returncode == 0, done.stderr
    assert mine.read_bytes() == b"my notes, nothing of the release's"
    assert _tree(data) == {**TASKS, **TRAIN, APTOS_TEST + ".part": b"my notes, nothing of the release's"}
    assert "APTOS_test.json.part" not in done.stdout + done.stderr


def test_a_listed_file_named_like_another_ones_old_part_is_downloaded_like_any_file(hub, data, tmp_path):
    site, url = hub
    listed = b'["the release\'s own file, listed under that name"]'
    site.repos[SAMPLE][APTOS_TEST + ".part"] = listed
    first = _run(tmp_path, url, "--include", APTOS_TEST + ".part")  # it alone, then the folder with it there
    assert first.returncode == 0, first.stderr
    done = _run(tmp_path, url, "--include", "2D_Task/APTOS/**")
    assert done.returncode == 0, done.stderr
    assert (data / (APTOS_TEST + ".part")).read_bytes() == listed
    assert (data / APTOS_TEST).read_bytes() == TASKS[APTOS_TEST]
    assert "2 files fetched" in done.stdout and "1 already there, 0 kept with other bytes" in done.stdout


def test_a_file_at_the_downloads_own_temporary_name_that_it_did_not_start_is_refused_and_kept(hub, data, tmp_path):
    site, url = hub
    theirs = _own_part(data, APTOS_TEST)
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"[")  # one byte: the start of the release's file, as a leftover of ours would be
    done = _run(tmp_path, url, "--include", APTOS_TEST)
    assert done.returncode == 2
    claim = theirs.with_name(".APTOS_test.json.medheb-download.claim")
    assert f"error: {theirs} is not a download this pipeline started (no record of it in {claim}): " in done.stderr
    assert f"it is kept as it is and nothing was fetched to {data / APTOS_TEST}. Move it away" in done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
    assert theirs.read_bytes() == b"[" and site.gets == [] and not (data / APTOS_TEST).exists()


def test_an_interrupted_download_of_ours_is_resumed_by_the_next_run_and_leaves_nothing(hub, data, tmp_path):
    site, url = hub
    config = tmp_path / "slow.yaml"
    config.write_text(yaml.safe_dump({"data_basedir": "data", "download_deadline": 2}))
    site.trickle.add(f"{SAMPLE}/{APTOS_TEST}")
    cut = _run(tmp_path, url, "--config", str(config), "--include", APTOS_TEST)
    assert cut.returncode == 2 and "did not finish within download_deadline" in cut.stderr
    part = _own_part(data, APTOS_TEST)
    kept = part.stat().st_size
    assert f"kept in {part}" in cut.stderr and 1 <= kept <= 2
    site.trickle.clear()
    done = _run(tmp_path, url, "--config", str(config), "--include", APTOS_TEST)
    assert done.returncode == 0, done.stderr
    assert site.gets[-1] == (f"{SAMPLE}/{APTOS_TEST}", f"bytes={kept}-")
    assert sorted(p.name for p in part.parent.iterdir()) == ["APTOS_test.json"]  # no temporary, no record of one
    assert (data / APTOS_TEST).read_bytes() == TASKS[APTOS_TEST]


def test_a_listed_name_of_the_pipelines_own_temporaries_is_refused_before_any_download(hub, data, tmp_path):
    site, url = hub
    site.repos[SAMPLE]["2D_Task/APTOS/.APTOS_test.json.medheb-download.part"] = b"["
    done = _run(tmp_path, url)
    assert done.returncode == 2
    assert (
        f"error: {SAMPLE} (commit {COMMIT}) lists 2D_Task/APTOS/.APTOS_test.json.medheb-download.part, a "
        "name this pipeline keeps for its own temporary files (.<name>.medheb-<tag>.part): nothing was downloaded"
    ) in done.stderr
    assert site.gets == [] and _tree(data) == {}


def test_a_path_listed_as_a_file_and_as_a_folder_is_refused_before_any_download(hub, data, tmp_path):
    site, url = hub
    site.repos[SAMPLE]["2D_Task/APTOS"] = b"a file where the folder is"
    done = _run(tmp_path, url)
    assert done.returncode == 2
    assert (
        f"error: {SAMPLE} (commit {COMMIT}) lists 2D_Task/APTOS both as a file and as the folder of "
        "2D_Task/APTOS/APTOS_i2i_test.json: a path cannot be both, so nothing was downloaded. Fix the "
        "repository's file list, or choose another --revision of a release, then run again"
    ) in done.stderr
    assert "Not a directory" not in done.stderr and "Traceback" not in done.stderr
    assert site.gets == [] and _tree(data) == {}
