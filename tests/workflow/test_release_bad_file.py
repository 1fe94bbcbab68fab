"""Issue 53, case 5: bad files at release images' places in a `build=all` run over four subsets. Each bad file
is its subset's row of the comparison and of the validation; the other subsets are built, compared and
validated, and the run exits non-zero only at its end, with `summary.txt` and `compared.tsv` naming every bad
file.

The places are the demo release's literal image names (REFERENCE.md: MedMNIST 2D,
`output_images/<split>/<class>/<split>_{i:06d}.png`; APTOS's image folder, `train_images/<id_code>.png`; BraTS-PED,
`<split>/{t1n,t2w}/<case>/slice_000.png`..), written by hand, not by the naming code."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.workflow

SUBSETS = ["BloodMNIST", "APTOS", "BraTS2023", "ISIC-2019"]
FIFO = "2D_Images/BloodMNIST/output_images/test/basophil/test_000000.png"
BOMB = "2D_Images/APTOS/train_images/000c1434d8d7.png"
LINK = "3D_Images/BraTS2023/train/t1n/BraTS-PED-00002-000/slice_010.png"


def _png_declaring(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares width x height pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("bad-release-file")
    made = subprocess.run(
        [sys.executable, "-m", "preprocess", "demo", str(workdir / "demo"), "--release-images"],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    base = workdir / "demo" / "DATA_BASEDIR"
    for place in (FIFO, BOMB, LINK):
        assert (base / place).is_file(), place  # a release image the demo ships at that name
        (base / place).unlink()
    os.mkfifo(base / FIFO)
    (base / BOMB).write_bytes(_png_declaring(60000, 60000))
    (base / LINK).symlink_to("/etc/passwd")
    passwd = hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest()
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    subsets = "subsets=[" + ",".join(f'"{name}"' for name in SUBSETS) + "]"
    done = subprocess.run([*command, "--cores", "2", "--config", "build=all", subsets], capture_output=True, text=True)
    return workdir, base, done, passwd


def test_the_run_fails_at_its_end_with_every_bad_file_named(run):
    workdir, _, done, _ = run
    log = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in log, log[-4000:]
    validation = workdir / "results" / "validation"
    summary = (validation / "summary.txt").read_text(encoding="utf-8")
    for place in (FIFO, BOMB, LINK):
        assert f"  {place}: differs: " in summary, (place, summary)
    rows = (validation / "compared.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "subset\tpath\tverdict"
    verdicts = {path: (subset, verdict) for subset, path, verdict in (row.split("\t") for row in rows[1:])}
    assert verdicts[FIFO][0] == "2D_Task/BloodMNIST"
    assert (
        verdicts[FIFO][1]
        == "differs: a FIFO (named pipe) in its place, not a file: kept as it is, nothing read from it"
    )
    assert verdicts[BOMB][0] == "2D_Task/APTOS"
    assert verdicts[BOMB][1] == (
        "differs: the file in place declares more pixels than the decoder's limit, a possible decompression bomb: "
        "not decoded"
    )
    assert verdicts[LINK][0] == "3D_Task/BraTS2023"
    assert verdicts[LINK][1] == (
        "differs: a symbolic link to /etc/passwd in its place, not a file: kept as it is, nothing read from it"
    )


def test_the_other_subsets_are_built_compared_and_validated(run):
    """ISIC-2019's and APTOS' release files are the raw files' bytes (no row of compared.tsv: nothing differs);
    BloodMNIST's and BraTS 2023's are PNGs of other encoders: each is compared and kept, the same pixels."""
    workdir, _, _, _ = run
    validation = workdir / "results" / "validation"
    rows = (validation / "compared.tsv").read_text(encoding="utf-8").splitlines()[1:]
    others = [row.split("\t") for row in rows if row.split("\t")[1] not in (FIFO, BOMB, LINK)]
    assert {verdict for _, _, verdict in others} == {"same pixels"}
    assert {subset for subset, _, _ in others} == {"2D_Task/BloodMNIST", "3D_Task/BraTS2023"}
    summary = (validation / "summary.txt").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("1 of 4 subsets rebuilt over the release's files: the same pixels") for line in summary)
    isic = [
        line.split() for line in summary if line.startswith(("2D_Task/ISIC-2019/", "Train_Data/2D_Task/ISIC_2019/"))
    ]
    assert len(isic) == 4 and {row[-1] for row in isic} == {"ok"}, isic
    assert "5 of 14 task files resolve every path (0 subsets from the release, 4 built)." in summary


def test_nothing_was_read_or_written_through_the_bad_files(run):
    _, base, _, passwd = run
    assert (base / FIFO).is_fifo()
    assert os.readlink(base / LINK) == "/etc/passwd"
    assert hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest() == passwd
    assert (base / BOMB).read_bytes() == _png_declaring(60000, 60000)
