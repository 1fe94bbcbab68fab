"""A train shard killed mid-way and run again converts only the items it had not finished, and ends with the same
files and the same manifest (byte for byte) as a build that was never interrupted."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, demo_config_file

# Runs `python -m preprocess convert ...`; every output the executor writes is appended to COUNT_FILE, and
# after KILL_AFTER of them (in any one process) the whole job, helpers included, gets SIGKILL.
DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    from preprocess import cli
    from preprocess.convert import executor

    limit, written, original = int(os.environ.get("KILL_AFTER", "0")), [0], executor.write

    def counted(output, *args):
        row = original(output, *args)
        with open(os.environ["COUNT_FILE"], "a") as handle:
            handle.write(row[0] + "\\n")
        written[0] += 1
        if limit and written[0] >= limit:
            os.killpg(0, signal.SIGKILL)
        return row

    executor.write = counted
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def _convert(
    tmp_path: Path, demo: Path, subset: str, conversion: str, workers: int, kill_after: int = 0
) -> tuple[int, list[str]]:
    count_file = tmp_path / f"count-{kill_after}.txt"
    count_file.unlink(missing_ok=True)
    config = demo_config_file(demo, tmp_path / "config.yaml", splits="all")
    command = [sys.executable, "-c", DRIVER, "convert", subset, "--conversion", conversion, "--config", str(config)]
    command += ["--results", str(demo / "results"), "--workers", str(workers)]
    env = {**os.environ, "COUNT_FILE": str(count_file), "KILL_AFTER": str(kill_after), "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, start_new_session=True)
    written = count_file.read_text().splitlines() if count_file.exists() else []
    return done.returncode, written


def _journaled(journal: Path) -> int:
    """Items in a journal: a header line, then lines that each hold a JSON list of finished items (a torn last
    line holds none)."""
    count = 0
    for line in journal.read_text().splitlines()[1:]:
        with contextlib.suppress(ValueError):
            count += len(json.loads(line))
    return count


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("subset", "conversion", "folder", "workers", "kill_after", "per_item"),
    [
        ("CT_RATE", "volumes_train", "3D_Images/CT_RATE", 1, 70, 65),  # 64 slices + a DRR; killed in volume 2
        ("BloodMNIST", "npz_unpack_2d_train", "2D_Images/BloodMNIST", 1, 4, 1),
        # two processes share the journal; of 5 items one of them writes at least 3, so a kill at 2 always comes
        ("BloodMNIST", "npz_unpack_2d_train", "2D_Images/BloodMNIST", 2, 2, 1),
    ],
)
def test_killed_shard_redoes_only_unfinished_items(
    tmp_path, demo, subset, conversion, folder, workers, kill_after, per_item
):
    clean = tmp_path / "clean"
    shutil.copytree(demo, clean, symlinks=True)
    code, clean_written = _convert(tmp_path, clean, subset, conversion, workers)
    assert code == 0
    manifests = sorted((clean / "results" / "convert").rglob("*.tsv"))
    assert len(manifests) == 1
    relative_manifest = manifests[0].relative_to(clean)

    code, before = _convert(tmp_path, demo, subset, conversion, workers, kill_after)
    assert code == -9  # SIGKILL
    journal = Path(str(demo / relative_manifest) + ".journal")
    assert journal.exists() and not (demo / relative_manifest).exists()
    finished = _journaled(journal)
    assert finished >= 1

    code, after = _convert(tmp_path, demo, subset, conversion, workers)
    assert code == 0
    total_items = len(clean_written) // per_item
    assert len(after) == (total_items - finished) * per_item  # only the unfinished items were written again
    if workers == 1:  # one process: the journaled items are the first written
        assert not set(after) & set(before[: finished * per_item])
    assert (demo / relative_manifest).read_bytes() == (clean / relative_manifest).read_bytes()
    assert _tree(demo / "DATA_BASEDIR" / folder) == _tree(clean / "DATA_BASEDIR" / folder)
    assert not journal.exists()  # dropped once the shard completed


def test_changed_config_starts_the_shard_afresh(tmp_path, demo):
    code, _ = _convert(tmp_path, demo, "BloodMNIST", "npz_unpack_2d_train", 1, kill_after=4)
    assert code == -9
    journal = next((demo / "results" / "convert").rglob("*.journal"))
    header, *entries = journal.read_text().splitlines()
    journal.write_text(header.replace('"fingerprint": "', '"fingerprint": "0') + "\n" + "\n".join(entries) + "\n")
    code, after = _convert(tmp_path, demo, "BloodMNIST", "npz_unpack_2d_train", 1)
    assert code == 0
    assert len(after) == 5  # every train and val image again: the journal was written for another configuration


def test_a_torn_last_line_and_a_vanished_output_are_redone(tmp_path):
    """A kill mid-write leaves half a line: it is ignored; an item whose file has gone since is not taken."""
    from preprocess.convert.journal import Journal

    base = tmp_path / "DATA_BASEDIR"
    (base / "a").mkdir(parents=True)
    (base / "a" / "kept.png").write_bytes(b"x")
    path = tmp_path / "shard.tsv.journal"
    kept = f"1:{hashlib.sha256(b'x').hexdigest()}"
    path.write_text(
        '{"journal": 3, "fingerprint": "f"}\n'
        f'[["kept", [["a/kept.png", "file", "{kept}"]], [], ""], ["gone", [["a/gone.png", "file", "1:cd"]], [], ""]]\n'
        '[["skipped", [], [["skipped", "bad input"]], ""]]\n'
        '[["torn", [["a/torn.png", "fi'
    )
    journal = Journal(path, "f", base, log=lambda text: None)
    assert journal.finished("kept") == ([("a/kept.png", "file", kept)], [])
    assert journal.finished("gone") is None
    assert journal.finished("skipped") == ([], [("skipped", "bad input")])
    assert journal.finished("torn") is None
    journal.record("next", [], [])
    journal.close()
    assert Journal(path, "f", base, log=lambda text: None).finished("next") == ([], [])


def test_items_go_out_in_batches_and_all_of_them_at_close(tmp_path, monkeypatch):
    """The first finished item is written at once (a kill right after it loses nothing); later ones wait for a
    batch, a flush (the executor's, at the end of every chunk) or the close; a kill loses only the unwritten."""
    from preprocess.convert import journal as journal_module

    monkeypatch.setattr(journal_module, "FLUSH_SECONDS", 3600.0)
    monkeypatch.setattr(journal_module, "FLUSH_ITEMS", 3)
    path = tmp_path / "shard.tsv.journal"
    journal = journal_module.Journal(path, "f", tmp_path, log=lambda text: None)
    journal.record("first", [], [])
    assert _journaled(path) == 1
    journal.record("second", [], [])
    assert _journaled(path) == 1  # waiting for its batch
    assert journal_module.Journal(path, "f", tmp_path, log=lambda text: None).entries.keys() == {"first"}
    journal.record("third", [], [])
    assert _journaled(path) == 1
    journal.record("fourth", [], [])  # second, third and fourth: a batch of FLUSH_ITEMS
    assert _journaled(path) == 4
    journal.record("fifth", [], [])
    journal.flush()
    assert _journaled(path) == 5
    journal.record("sixth", [], [])
    journal.close()
    entries = journal_module.Journal(path, "f", tmp_path, log=lambda text: None).entries
    assert list(entries) == ["first", "second", "third", "fourth", "fifth", "sixth"]
