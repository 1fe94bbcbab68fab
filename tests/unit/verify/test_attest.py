"""`python -m preprocess attest`: pixel fingerprints of a built demo tree, stable across folders, workers and PNG
encoders, and a --compare that names exactly the paths that differ. The demo's file is a committed fixture
(tests/data/demo-fingerprints.tsv): a change to any demo pixel shows there. Regenerate it with

    make demo-fingerprints
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from conftest import REPO, added_subsets, demo_config_file, demo_settings, demo_values
from preprocess.pipeline import steps
from preprocess.readiness.buildable import BUILD, decide_subsets

FIXTURE = REPO / "tests" / "data" / "demo-fingerprints.tsv"
COLUMNS = "subset\tpath\tstatus\tmode\tdtype\tshape\tsha256"


def _build(folder: Path, template: Path) -> Path:
    """A demo copy in `folder` with every subset its raw data allows converted (what the workflow builds)."""
    demo = folder / "demo"
    shutil.copytree(template, demo, symlinks=True)
    settings = demo_settings(demo)
    build = steps.Build(settings)
    checks = build.check(sources=sorted(build.registry.sources))
    for plan in decide_subsets(build.registry, "all", checks, settings):
        if plan.action == BUILD:
            build.convert(subset=plan.subset, checks=checks)
    return demo


@pytest.fixture(scope="session")
def built(tmp_path_factory, demo_template) -> Path:
    return _build(tmp_path_factory.mktemp("attest-first"), demo_template)


@pytest.fixture(scope="session")
def attested(built, tmp_path_factory) -> Path:
    """The fingerprint file of the built demo (one worker)."""
    out = tmp_path_factory.mktemp("attested") / "fingerprints.tsv"
    done = _attest(built, out, tmp_path_factory.mktemp("attested-config"))
    assert done.returncode == 0, done.stderr
    return out


def _cli(*args, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "preprocess", *map(str, args)], cwd=cwd, capture_output=True, text=True
    )


def _attest(demo: Path, out: Path, scratch: Path, *extra) -> subprocess.CompletedProcess:
    config = demo_config_file(demo, scratch / "config.json")
    return _cli("attest", demo / "DATA_BASEDIR", "--out", out, "--config", config, "--results", scratch / "r", *extra)


def _compare(theirs: Path, demo: Path, scratch: Path, *extra) -> subprocess.CompletedProcess:
    config = demo_config_file(demo, scratch / "config.json")
    return _cli(
        "attest", "--compare", theirs, demo / "DATA_BASEDIR", "--config", config, "--results", scratch / "r", *extra
    )


def _entries(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines[lines.index(COLUMNS) + 1 :]]


def _copy(demo: Path, folder: Path) -> Path:
    """A copy of a built demo whose links (the MIMIC-CXR farm) lead into the copy's own raw root."""
    target = folder / "demo"
    shutil.copytree(demo, target, symlinks=True)
    for link in _files(target / "DATA_BASEDIR", links=True):
        pointed = os.readlink(link)
        if pointed.startswith(f"{demo}/"):
            link.unlink()
            link.symlink_to(f"{target}/{pointed.removeprefix(f'{demo}/')}")
    return target


def _files(folder: Path, links: bool = False) -> list[Path]:
    """The regular files (or the links) under `folder`, links not followed."""
    found = []
    for root, dirs, names in os.walk(folder):
        for name in [*names, *dirs]:
            path = Path(root, name)
            if path.is_symlink() == links and (links or path.is_file()):
                found.append(path)
    return found


def _first_png(attested: Path) -> str:
    return next(e[1] for e in _entries(attested) if e[1].endswith(".png") and e[3] == "RGB")


# --- the file ----------------------------------------------------------------------------------------


def test_every_named_image_is_listed_once_with_its_decoded_pixels(built, attested):
    entries = _entries(attested)
    keys = [(e[0], e[1]) for e in entries]
    assert keys == sorted(set(keys))  # sorted, each (subset, path) once
    data = built / "DATA_BASEDIR"
    # The images the APTOS test task names, read from the task file itself (record paths under its image root)
    records = json.loads((data / "2D_Task" / "APTOS" / "APTOS_test.json").read_text(encoding="utf-8"))
    named = {f"2D_Images/APTOS/train_images/{r['qry_img_path']}" for r in records}
    aptos = {e[1] for e in entries if e[0] == "2D_Task/APTOS"}
    assert named <= aptos and all(p.startswith("2D_Images/APTOS/") for p in aptos)
    assert not any(e[0].startswith("Text_Task/") for e in entries)
    assert all(e[2] == "ok" for e in entries), [e for e in entries if e[2] != "ok"][:5]
    # The pixel digest as documented: "<mode> <dtype> <shape>\n" then the pixels, row-major, little-endian
    for entry in [e for e in entries if e[1].endswith((".png", ".jpg"))][:: max(1, len(entries) // 40)]:
        with Image.open(data / entry[1]) as image:
            pixels = np.array(image)
            mode = image.mode
        shape = "x".join(map(str, pixels.shape))
        expected = hashlib.sha256(
            f"{mode} {pixels.dtype} {shape}\n".encode() + pixels.astype(pixels.dtype.newbyteorder("<")).tobytes()
        )
        assert entry[3:] == [mode, str(pixels.dtype), shape, expected.hexdigest()], entry[1]


def test_subset_and_tree_digests_are_sha256_of_the_lines(attested):
    lines = attested.read_text(encoding="utf-8").splitlines()
    header = {tuple(line.split("\t")[:2]): line.split("\t")[2:] for line in lines if line.startswith("# ")}
    body = lines[lines.index(COLUMNS) + 1 :]
    tree = hashlib.sha256("".join(f"{line}\n" for line in body).encode()).hexdigest()
    assert header[("# tree", tree)] == [str(len(body))]
    subsets = sorted({line.split("\t")[0] for line in body})
    assert len(subsets) >= 30
    for subset in subsets:
        mine = [line for line in body if line.split("\t")[0] == subset]
        digest = hashlib.sha256("".join(f"{line}\n" for line in mine).encode()).hexdigest()
        assert header[("# subset", subset)] == [digest, str(len(mine))]
    assert re.search(r"^# decoder\tPillow \S+, numpy \S+$", attested.read_text(encoding="utf-8"), re.M)
    assert str(attested.parents[1]) not in attested.read_text(encoding="utf-8")  # no absolute paths


def test_demo_matches_the_committed_fixture(built, tmp_path):
    """A change to any demo pixel fails here: regenerate the fixture with `make demo-fingerprints`."""
    done = _compare(FIXTURE, built, tmp_path)
    added = {key for key in added_subsets() if not key.startswith("Text_Task/")}  # an extra folder's image subsets
    if not added:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:] + "\n(make demo-fingerprints)"
        assert "the trees hold the same pixels" in done.stdout
        return
    # With an extra registry folder, its subsets are only in this build, and every subset of the fixture is equal.
    fixture = {line.split("\t")[1] for line in FIXTURE.read_text().splitlines() if line.startswith("# subset\t")}
    assert done.returncode == 1 and f"{len(added)} of {len(added) + len(fixture)} subsets differ" in done.stdout
    report = json.loads(_compare(FIXTURE, built, tmp_path, "--json").stdout)
    verdicts = {one["subset"]: one["verdict"] for one in report["subsets"]}
    assert verdicts == {**dict.fromkeys(fixture, "equal"), **dict.fromkeys(added, "only in mine")}


def test_two_builds_in_other_folders_and_two_workers_give_the_same_bytes(tmp_path, demo_template, attested):
    second = _build(tmp_path / "elsewhere", demo_template)
    out = tmp_path / "second.tsv"
    done = _attest(second, out, tmp_path, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "progress attest: " in done.stderr
    assert out.read_bytes() == attested.read_bytes()


def test_reencoding_every_png_leaves_the_file_unchanged(built, attested, tmp_path):
    copy = _copy(built, tmp_path / "copy")
    pngs = [p for p in _files(copy / "DATA_BASEDIR") if p.suffix == ".png"]
    assert len(pngs) > 100
    for path in pngs:
        before = path.read_bytes()
        with Image.open(path) as image:
            image.load()
            image.save(path, format="PNG", compress_level=9)
        assert path.read_bytes() != before  # another zlib level: other bytes
    out = tmp_path / "reencoded.tsv"
    assert _attest(copy, out, tmp_path).returncode == 0
    assert out.read_bytes() == attested.read_bytes()


# --- compare -----------------------------------------------------------------------------------------


def test_one_flipped_pixel_is_named_and_nothing_else(built, attested, tmp_path):
    copy = _copy(built, tmp_path / "copy")
    flipped = _first_png(attested)
    path = copy / "DATA_BASEDIR" / flipped
    with Image.open(path) as image:
        pixels = np.array(image)
    pixels[0, 0, 0] ^= 1
    Image.fromarray(pixels).save(path)
    done = _compare(attested, copy, tmp_path)
    assert done.returncode == 1
    assert f"different pixels (1):\n  {_subset_of(attested, flipped)}  {flipped}  " in done.stdout
    named = [line for line in done.stdout.splitlines() if "  2D_Images/" in line or "  3D_Images/" in line]
    assert len(named) == 1
    mine = tmp_path / "r" / "attest" / "mine.tsv"  # the copy's fingerprints, written by the comparison
    report = json.loads(_cli("attest", "--compare", attested, mine, "--json", cwd=tmp_path).stdout)
    assert [p["path"] for s in report["subsets"] for p in s["different"]] == [flipped]
    assert [s["subset"] for s in report["subsets"] if s["verdict"] != "equal"] == [_subset_of(attested, flipped)]
    assert sum(s["counts"]["only_theirs"] + s["counts"]["only_mine"] for s in report["subsets"]) == 0
    assert sum(s["counts"]["different"] for s in report["subsets"]) == 1
    assert report["equal"] is False


def _subset_of(attested: Path, path: str) -> str:
    return next(e[0] for e in _entries(attested) if e[1] == path)


def test_a_missing_image_is_only_in_one_side_and_a_broken_one_differs(built, attested, tmp_path):
    copy = _copy(built, tmp_path / "copy")
    pngs = [e[1] for e in _entries(attested) if e[1].endswith(".png")]
    missing, broken = pngs[0], pngs[-1]
    (copy / "DATA_BASEDIR" / missing).unlink()
    (copy / "DATA_BASEDIR" / broken).write_bytes(b"not a png")
    mine = tmp_path / "mine.tsv"
    assert _attest(copy, mine, tmp_path).returncode == 0  # recorded, not a failure of attest
    rows = {e[1]: e[2:] for e in _entries(mine)}
    assert rows[missing] == ["missing", "-", "-", "-", "-"]
    assert rows[broken] == ["undecodable", "-", "-", "-", hashlib.sha256(b"not a png").hexdigest()]
    done = _cli("attest", "--compare", attested, mine, cwd=tmp_path)  # two files: no tree, no config needed
    assert done.returncode == 1
    assert re.search(rf"only in theirs \(1\):\n  \S+  {re.escape(missing)}  \(theirs: RGB|L ", done.stdout)
    assert f"  {broken}  " in done.stdout.split("different pixels (1):")[1].split("\n\n")[0]
    reverse = _cli("attest", "--compare", mine, attested, cwd=tmp_path).stdout
    assert f"only in mine (1):\n  {_subset_of(attested, missing)}  {missing}  (theirs: missing; mine: " in reverse


def test_comparing_two_equal_files_exits_zero_without_any_image(attested, tmp_path):
    theirs = tmp_path / "published.tsv"
    theirs.write_bytes(attested.read_bytes())
    done = _cli("attest", "--compare", theirs, attested, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the trees hold the same pixels" in done.stdout and "different" not in done.stdout.split("\n\n")[-1]


def test_many_differences_are_listed_up_to_the_limit(attested, tmp_path):
    lines = attested.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index(COLUMNS + "\n") + 1
    theirs = tmp_path / "theirs.tsv"
    theirs.write_text("".join(lines[:start]), encoding="utf-8")  # a lab that built nothing
    done = _cli("attest", "--compare", attested, theirs, "--limit", "3", cwd=tmp_path)
    assert done.returncode == 1
    count = len(lines) - start
    assert (
        f"only in theirs ({count}):" in done.stdout and f"... {count - 3} more (--json lists them all)" in done.stdout
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\n", "is not a fingerprint file of this format"),
        ("# MedHEB-Bench pixel fingerprints, format 1\n# tree\tx\t0\n", "no column names"),
        (f"# MedHEB-Bench pixel fingerprints, format 1\n{COLUMNS}\na\tb\n", "line 3: expected 7 tab-separated"),
        (
            f"# MedHEB-Bench pixel fingerprints, format 1\n{COLUMNS}\ns\tb\tmissing\t-\t-\t-\t-\n"
            "s\ta\tmissing\t-\t-\t-\t-\n",
            "line 4: s a is out of order",
        ),
    ],
)
def test_a_file_attest_did_not_write_is_named(tmp_path, attested, text, message):
    bad = tmp_path / "theirs.tsv"
    bad.write_text(text, encoding="utf-8")
    done = _cli("attest", "--compare", bad, attested, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(bad) in done.stderr and message in done.stderr


def test_attest_without_out_or_compare_says_what_it_needs(tmp_path, built):
    done = _cli("attest", built / "DATA_BASEDIR", "--config", demo_config_file(built, tmp_path / "c.json"))
    assert done.returncode == 2 and "attest needs --out FILE" in done.stderr


# --- reading: pipes, escapes, the header -----------------------------------------------------------------

DIGEST = "0" * 64
SMALL = (  # a fingerprint file in the documented format: the format line, the header, the column names, entries
    "# MedHEB-Bench pixel fingerprints, format 1 (written by hand)\n"
    f"# tree\t{DIGEST}\t2\n"
    f"# subset\t2D_Task/APTOS\t{DIGEST}\t2\n"
    f"{COLUMNS}\n"
    f"2D_Task/APTOS\t2D_Images/APTOS/a.png\tok\tL\tuint8\t2x2\t{'1' * 64}\n"
    f"2D_Task/APTOS\t2D_Images/APTOS/b.png\tok\tL\tuint8\t2x2\t{'2' * 64}\n"
)
SAME = "the trees hold the same pixels"


def _small(folder: Path, name: str = "mine.tsv") -> Path:
    path = folder / name
    path.write_text(SMALL, encoding="utf-8")
    return path


def _run(command, timeout: float = 120, **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=timeout, **options)


def test_compare_reads_process_substitution_and_standard_input_once(tmp_path):
    mine = _small(tmp_path)
    command = f"{sys.executable} -m preprocess attest --compare <(cat {mine}) {mine}"
    done = _run(["bash", "-c", command])
    assert done.returncode == 0 and SAME in done.stdout, done.stderr
    for name in ("/dev/stdin", "-"):
        with open(mine, "rb") as stdin:
            done = _run([sys.executable, "-m", "preprocess", "attest", "--compare", name, str(mine)], stdin=stdin)
        assert done.returncode == 0 and SAME in done.stdout, (name, done.stderr)


def test_compare_reads_a_named_pipe_its_writer_fills(tmp_path):
    mine = _small(tmp_path)
    fifo = tmp_path / "theirs.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(
        [sys.executable, "-m", "preprocess", "attest", "--compare", str(fifo), str(mine)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        with open(fifo, "w", encoding="utf-8") as writer:  # blocks until attest opens the pipe to read
            writer.write(SMALL)
        out, err = reader.communicate(timeout=120)
    finally:
        reader.kill()  # nothing left once it has ended; a reader waiting for a second writer does not outlive the test
    assert reader.returncode == 0 and SAME in out, err


def test_compare_on_a_named_pipe_without_a_writer_stops_with_its_name(tmp_path):
    """Opening a FIFO blocks until a writer comes: attest waits a bounded time (FIFO_WAIT, shortened here)."""
    mine = _small(tmp_path)
    fifo = tmp_path / "nobody-writes.fifo"
    os.mkfifo(fifo)
    code = (
        "import sys; from preprocess.verify import fingerprintfile; fingerprintfile.FIFO_WAIT = 0.5; "
        "from preprocess.cli import main; "
        f"sys.exit(main(['attest', '--compare', {str(fifo)!r}, {str(mine)!r}]))"
    )
    done = _run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 2 and "unexpected" not in done.stderr and "Traceback" not in done.stderr
    assert f"{fifo} is a named pipe (FIFO) that no program wrote to in 0.5 s" in done.stderr


def test_a_lone_surrogate_in_a_path_reads_back_exactly(tmp_path):
    """A task file may name `a\udc80.png` (JSON's \udc80 escape): the file holds the escape text, which reads
    back as the same character, so the file compares equal to itself and its order holds. A literal backslash
    before `udc80`, a tab and a newline keep their own escapes."""
    from preprocess.verify import fingerprintfile

    paths = sorted(["2D_Images/X/aZ.png", "2D_Images/X/a_.png", "2D_Images/X/a\udc80.png", "2D_Images/X/b\\udc80.png",
                    "2D_Images/X/c\td\ne.png"])  # fmt: skip
    out = tmp_path / "mine.tsv"
    fingerprintfile.write_entries(out, [fingerprintfile.Entry("2D_Task/X", path, "missing") for path in paths])
    written = out.read_bytes()
    assert b"\t2D_Images/X/a\\udc80.png\t" in written and b"\t2D_Images/X/b\\\\udc80.png\t" in written
    assert [entry.path for entry in fingerprintfile.read_entries(out)] == paths
    done = _cli("attest", "--compare", out, out, cwd=tmp_path)
    assert done.returncode == 0 and SAME in done.stdout, done.stderr


@pytest.mark.parametrize("count", ["²", "٣", "x", ""])
def test_a_subset_count_that_is_not_ascii_digits_names_the_file_and_line(tmp_path, count):
    theirs = tmp_path / "theirs.tsv"
    theirs.write_text(SMALL.replace(f"{DIGEST}\t2\n{COLUMNS}", f"{DIGEST}\t{count}\n{COLUMNS}"), encoding="utf-8")
    done = _cli("attest", "--compare", theirs, _small(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "unexpected" not in done.stderr, done.stderr
    assert f"{theirs}, line 3: a subset line holds" in done.stderr


# --- the registry's published fingerprints, in status --------------------------------------------------


def test_status_says_whether_a_built_subset_matches_its_published_fingerprint(built, attested, tmp_path):
    header = {
        line.split("\t")[1]: line.split("\t")[2]
        for line in attested.read_text().splitlines()
        if line.startswith("# subset")
    }
    overrides = yaml.safe_load((built / "registry-overrides.yaml").read_text(encoding="utf-8"))
    overrides["subsets"] = {
        "2D_Task/APTOS": {"fingerprint": header["2D_Task/APTOS"]},
        "2D_Task/Kvasir": {"fingerprint": "0" * 64},
        "2D_Task/USData": {"fingerprint": "1" * 64},  # not built in the demo: nothing to say
    }
    override_file = tmp_path / "published.yaml"
    override_file.write_text(yaml.safe_dump(overrides), encoding="utf-8")
    config = demo_config_file(built, tmp_path / "config.json", registry_overrides=str(override_file))
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(attested, results / "fingerprints.tsv")
    done = _cli("status", built / "DATA_BASEDIR", "--config", config, "--results", results, "--json")
    states = {row["subset"]: row["fingerprint"] for row in json.loads(done.stdout)["subsets"]}
    assert states["2D_Task/APTOS"] == "matches published"
    assert states["2D_Task/Kvasir"] == "differs from published"
    assert states["2D_Task/USData"] == "" and states["2D_Task/BloodMNIST"] == ""
    table = _cli("status", built / "DATA_BASEDIR", "--config", config, "--results", results).stdout
    assert re.search(r"^2D_Task/APTOS .* matches published$", table, re.M)


@pytest.mark.parametrize(
    ("subsets", "message"),
    [
        ({"2D_Task/APTOZ": {"fingerprint": "0" * 64}}, "unknown subset '2D_Task/APTOZ' (did you mean 2D_Task/APTOS"),
        ({"2D_Task/APTOS": {"image_root": "x"}}, "only 'fingerprint' can be overridden (subset '2D_Task/APTOS')"),
        ({"2D_Task/APTOS": {"fingerprint": "abc"}}, "fingerprint: 'abc' does not match"),
    ],
)
def test_a_bad_published_fingerprint_is_named(built, tmp_path, subsets, message):
    override_file = tmp_path / "published.yaml"
    override_file.write_text(yaml.safe_dump({"subsets": subsets}), encoding="utf-8")
    config = demo_config_file(built, tmp_path / "config.json", registry_overrides=str(override_file))
    done = _cli("status", built / "DATA_BASEDIR", "--config", config, "--results", tmp_path / "r")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr


# --- the workflow ------------------------------------------------------------------------------------


@pytest.mark.workflow
def test_the_workflow_writes_the_fingerprints_and_the_front_page_shows_their_digests(tmp_path, demo):
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text(encoding="utf-8"))
    user = workdir / "user.yaml"
    user.write_text(yaml.safe_dump(demo_values(demo, subsets=["2D_Task/APTOS", "2D_Task/MIMIC-CXR-T"])))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--configfile", str(user), "--cores", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    written = workdir / "results" / "fingerprints.tsv"
    for subset in ("2D_Task/APTOS", "2D_Task/MIMIC-CXR-T"):  # one shard of a few images, its merge, then the tree's
        assert "attest: " in (workdir / "logs" / "attest" / subset / "0-of-1.log").read_text(encoding="utf-8")
        merged = (workdir / "logs" / "attest" / f"{subset}.log").read_text(encoding="utf-8")
        assert merged.startswith(f"results/attest/{subset}.tsv: ") and " images of 1 subsets, tree " in merged
    assert "2 subsets" in (workdir / "logs" / "fingerprints.log").read_text(encoding="utf-8")
    by_cli = tmp_path / "cli.tsv"
    assert _attest(demo, by_cli, tmp_path, "--subset", "APTOS", "MIMIC-CXR-T").returncode == 0
    assert written.read_bytes() == by_cli.read_bytes()
    header = [line.split("\t") for line in written.read_text(encoding="utf-8").splitlines() if line.startswith("# ")]
    subsets = {fields[1]: fields[2] for fields in header if fields[0] == "# subset"}
    assert sorted(subsets) == ["2D_Task/APTOS", "2D_Task/MIMIC-CXR-T"]
    front = (workdir / "results" / "report" / "front.html").read_text(encoding="utf-8")
    tree = next(fields[1] for fields in header if fields[0] == "# tree")
    assert f'<code data-fingerprint="tree">{tree}</code>' in front
    for subset, digest in subsets.items():
        assert f"<td>{subset}</td>" in front and f"<code>{digest}</code>" in front


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_the_fingerprint_file_follows_the_umask_as_every_other_result(tmp_path, umask, mode):
    """Fingerprints are meant to be published: readable by whom the umask lets read the other results."""
    from preprocess.verify import fingerprintfile

    out = tmp_path / "results" / "fingerprints.tsv"
    previous = os.umask(umask)
    try:
        fingerprintfile.merge([], out)  # the workflow's per-subset files merged: here none, a header alone
    finally:
        os.umask(previous)
    assert oct(out.stat().st_mode & 0o777) == oct(mode)
    assert [path.name for path in out.parent.iterdir()] == ["fingerprints.tsv"]  # no temporary left beside it
