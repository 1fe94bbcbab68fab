"""Every conversion of the registry side by side (issue 50, item 1): the authors' recipe re-stated, the
pipeline's `convert` and the decode+encode floor, on the real-size fakes, one row per conversion.

Rows: one per costs.yaml key at the registry's default variants (MedMNIST at 224 px, MedSegBench at 512,
MedMNIST 3D at 64: the sizes a build uses unless told otherwise), its first test conversion, as
benchmarks/item_costs.py picks them. Inputs: the real-size fakes (`python -m preprocess demo DIR --real-sizes`,
preprocess/demo/real.py; each source's sizes and where they come from are in its fakes.py `SIZE`).

Three commands per row, each its own process pinned to one core, interleaved over the repeats (the order
turns each repeat), each writing into a new folder; the figure is each command's own timing of its work,
start-up (interpreter, imports, the registry) excluded, divided by the conversion's planned items:
  recipe   the reference rule re-stated independently of the pipeline's code: the demo's release oracles
           (preprocess/demo/release_images, as the tests use them) or, for the subsets the release may not
           ship, benchmarks/recipes.py; every output the pipeline wrote is made and saved as the authors'
           scripts save it (Pillow's default PNG; upstream bytes written as they are; links made)
  convert  `python -m preprocess convert SUBSET --conversion NAME`, one worker, into a new DATA_BASEDIR
           holding the release's records; its own "wrote N entries in X s"
  floor    decoding the inputs the conversion read (traced once: the files it opened under the raw root) and
           writing the outputs as the pipeline writes them, nothing else: .nii.gz and NRRD payloads and npz
           members inflated with ISA-L, DICOM pixel data decoded by pydicom, a PNG or JPEG decoded by Pillow
           only where an output is made from its pixels, parquet read by pyarrow (image cells decoded likewise);
           each PNG output encoded by preprocess.formats.pngio from its pixels (loaded before the timing; one
           filter pass per stack of images of one shape, as the pipeline filters a block), an output that is an
           input's bytes (a file, a zip member, a parquet cell) written from them, each file written as an
           atomic writer must (a new temporary name, the bytes, a rename), a hard link or a symbolic link made
Each row says whether every output of the recipe has the pipeline's pixels (PNGs decoded and compared; bytes
and link targets compared), and the load average during its runs.

Timed runs take the lock /tmp/medheb-bench.lock, a row at a time, so that other benchmarks' timed runs on the
machine do not overlap them.

    python benchmarks/side_by_side.py [--fakes DIR | --keep DIR] [--repeats 3] [--only KEY ...] [--cpu 1]
                                      [--out benchmarks/out/side_by_side]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from timing import fresh_folders, pinned  # noqa: E402

LOCK = Path("/tmp/medheb-bench.lock")
# Items of each source in the fakes: about a second of the pipeline's work a row, volumes a few
COUNTS = {
    "ct_rate": 2, "radgenome_chestct": 2, "hanseg": 2, "mmdental": 2, "synthrad2023": 2, "brats_ped": 2,
    "brats_men": 2, "cirrmri600": 2, "mrnet": 4, "pannuke": 16,
    "medmnist": {"28": 400, "64": 200, "128": 100, "224": 100},
    "medmnist3d": {"28": 40, "64": 12}, "medsegbench": {"128": 64, "256": 16, "512": 12},
    "rfmid": 8, "m3d_cap": 4, "aptos2019": 8, "vindr_cxr": 4, "vindr_mammo": 8, "mimic_cxr_jpg": 8,
}  # fmt: skip
ITEMS = 8  # every other source
TOOLS = ("recipe", "convert", "floor")


def rows(settings, only=None) -> dict[str, tuple]:
    """costs.yaml key -> (subset, conversion) of the default variants, as item_costs.py picks them."""
    from item_costs import conversions

    return conversions(settings, only)


# --- the runs of one row ----------------------------------------------------------------------------------


def run_tool(command: list[str]) -> tuple[float, str]:
    """(seconds the command's own timing gives, its output): 'wrote N entries in X s' or 'seconds X'."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    log = done.stdout + done.stderr
    if done.returncode:
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(command[-6:])} failed (exit {done.returncode}):\n{tail}")
    found = re.search(r"wrote \d+ entries in ([0-9.]+) s", log) or re.search(r"^seconds ([0-9.]+)$", log, re.M)
    if not found:
        raise RuntimeError(f"no timing in the output of {' '.join(command[-6:])}:\n{log[-1500:]}")
    return float(found.group(1)), log


def convert_command(config: Path, subset, conversion, data: Path, results: Path, manifest: Path, shard: str):
    return [
        *(sys.executable, "-m", "preprocess", "convert", subset.key, "--conversion", conversion.name),
        *("--config", str(config), "--data-basedir", str(data), "--results", str(results)),
        *("--manifest", str(manifest), "--workers", "1", "--shard", shard),
    ]


def fresh_tree(records: Path, folder: Path) -> Path:
    """A new DATA_BASEDIR holding the release's records (task JSONs, Train_Data JSONLs), as a user's has."""
    data = folder / "DATA"
    for path in records.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            target = data / path.relative_to(records)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    data.mkdir(parents=True, exist_ok=True)
    return data


def manifest_rows(manifest: Path) -> list[tuple[str, str, str]]:
    from preprocess.formats.manifest import read_manifest

    return [tuple(row) for row in read_manifest(manifest) if row[1] in ("file", "symlink")]


@contextlib.contextmanager
def bench_lock():
    LOCK.touch(exist_ok=True)
    with open(LOCK) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def measure_row(key, subset, conversion, config: Path, fakes: Path, folders, repeats: int, cpu: str) -> dict:
    """One row: the traced warm-ups, then the three tools interleaved, each on every item and on one, so that
    the per-item figure is the steady state, (all - one) / (items - 1), without what a run costs once (a
    conversion's plan and journal, a recipe's tables, imports not counted at all); the pixel check."""
    from item_costs import item_count

    from preprocess.registry.config import load_settings

    settings = load_settings(config)
    items = item_count(settings, subset, conversion)
    if items < 2:
        raise RuntimeError(f"{items} item(s) in the fakes: a steady state needs two or more")
    records = fakes / "DATA_BASEDIR"
    warm = next(folders)
    results = warm / "results"  # the checksum and schema caches every convert run shares, as a workflow's jobs
    sizes = {"all": "1/1", "one": f"1/{items}"}  # shard 1 of N holds the item at position 0 alone
    inputs = {}
    for size, shard in sizes.items():
        folder = warm / size
        data = fresh_tree(records, folder)
        traced = folder / "traced.json"
        trace = [sys.executable, str(Path(__file__)), "--trace", str(traced), "--raw-root", str(fakes / "raw"), "--"]
        convert = convert_command(config, subset, conversion, data, results, folder / "manifest.tsv", shard)
        run_tool(trace + convert[3:])
        written = manifest_rows(folder / "manifest.tsv")
        plan = floor_plan(json.loads(traced.read_text()), written, data, folder / "floor")
        (folder / "floor" / "plan.json").write_text(json.dumps(plan))
        (folder / "names.json").write_text(json.dumps([path for path, _, _ in written]))
        inputs[size] = written
    written = inputs["all"]

    def command(tool: str, size: str, out: Path) -> list[str]:
        if tool == "convert":
            tree = fresh_tree(records, out)
            return convert_command(config, subset, conversion, tree, results, out / "manifest.tsv", sizes[size])
        if tool == "recipe":
            return [
                *(sys.executable, str(Path(__file__)), "--recipe", subset.key, conversion.name, str(config)),
                *(str(warm / size / "names.json"), str(out)),
            ]
        return [sys.executable, str(Path(__file__)), "--floor", str(warm / size / "floor" / "plan.json"), str(out)]

    seconds = {(tool, size): [] for tool in TOOLS for size in sizes}
    loads, last = [], {}
    with bench_lock():
        for repeat in range(repeats):
            order = TOOLS[repeat % 3 :] + TOOLS[: repeat % 3]
            for size in sizes:
                for tool in order:
                    out = next(folders)
                    out.mkdir(parents=True)
                    taken, _ = run_tool(pinned(command(tool, size, out), cpu))
                    seconds[tool, size].append(taken)
                    loads.append(os.getloadavg()[0])
                    last[tool, size] = out
                    line = f"{key} {repeat + 1} {tool} {size}: {taken:.3f} s, load {loads[-1]:.1f}"
                    print(f"  {line}", file=sys.stderr)
    equal, compared = same_outputs(last["recipe", "all"], last["convert", "all"] / "DATA", written)
    median = {k: statistics.median(v) for k, v in seconds.items()}
    steady = {tool: max(median[tool, "all"] - median[tool, "one"], 0.0) / (items - 1) for tool in TOOLS}
    return {
        "key": key, "subset": subset.key, "conversion": conversion.name, "items": items,
        "outputs": len(written), **{f"{tool}_s": steady[tool] for tool in TOOLS},
        **{f"{tool}_once_s": max(median[tool, "one"] - steady[tool], 0.0) for tool in TOOLS},
        "runs": {f"{tool} {size}": v for (tool, size), v in seconds.items()},
        "equal": equal, "compared": compared, "load": [min(loads), max(loads)],
    }  # fmt: skip


# --- the trace: which raw files a conversion reads ------------------------------------------------------


def trace_main(traced: Path, raw_root: Path, argv: list[str]) -> None:
    """Run the CLI in this process, noting every file under the raw root the conversion opens for reading (its
    plan and build, convert/base.py `_build`; not the raw check before it)."""
    opened: list[str] = []
    root = str(raw_root.resolve()) + os.sep
    building = []  # set while the conversion itself runs: the raw check before it opens every file too

    def hook(event, args):
        if building and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            writing = (mode and any(c in mode for c in "wax+")) or (mode is None and flags & (os.O_WRONLY | os.O_RDWR))
            if not writing:
                full = os.path.realpath(path)
                if full.startswith(root) and os.path.isfile(full) and full not in opened:
                    opened.append(full)

    import pyarrow.parquet as pq

    original = pq.ParquetFile.__init__

    def parquet_init(self, source, *rest, **named):  # pyarrow opens a path in C++, past the audit hook
        if isinstance(source, (str, os.PathLike)):
            hook("open", (source, "rb", 0))
        original(self, source, *rest, **named)

    pq.ParquetFile.__init__ = parquet_init
    members = npz_members_noted()
    from preprocess.convert import base

    build = base._build

    def traced_build(*rest, **named):
        building.append(True)
        try:
            return build(*rest, **named)
        finally:
            building.clear()

    base._build = traced_build
    sys.addaudithook(hook)
    from preprocess.cli import main as cli_main

    status = cli_main(argv)
    traced.write_text(json.dumps({"files": opened, "npz_members": {k: sorted(v) for k, v in members.items()}}))
    sys.exit(status)


def npz_members_noted() -> dict[str, set]:
    """{npz path: the members the conversion inflated}: the pipeline's npz reader wrapped (a MedMNIST test
    build inflates the test split's members, not the whole archive)."""
    from preprocess.formats import npzio

    members: dict[str, set] = {}
    pieces, whole = npzio._member_pieces, npzio.NpzFile._raw_member

    def noted_pieces(path, entry, *rest, **named):
        members.setdefault(os.path.realpath(path), set()).add(entry.filename)
        return pieces(path, entry, *rest, **named)

    def noted_whole(self, entry, *rest, **named):
        members.setdefault(os.path.realpath(self.path), set()).add(entry.filename)
        return whole(self, entry, *rest, **named)

    npzio._member_pieces, npzio.NpzFile._raw_member = noted_pieces, noted_whole
    return members


# --- the floor ---------------------------------------------------------------------------------------------


def floor_plan(traced: dict, written, data: Path, folder: Path) -> dict:
    """What the floor does: each input with how it is decoded, each output with where its bytes come from.
    An output whose bytes are an input's (a whole file, a zip member, a parquet cell) is written from them; a
    hard link or symbolic link is made again; any other PNG is encoded from its pixels (saved here)."""
    import zipfile

    import numpy as np
    import pyarrow.parquet as pq
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    inputs, members = traced["files"], traced["npz_members"]
    by_digest = {}
    inodes = {os.stat(path).st_ino: path for path in inputs}
    for path in inputs:
        if path.endswith(".zip"):
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if not info.is_dir():
                        by_digest.setdefault(_sha(archive.read(info)), ["member", path, info.filename])
        elif path.endswith(".parquet"):
            table = pq.read_table(path)
            for column in table.column_names:
                for row, cell in enumerate(table.column(column).to_pylist()):
                    data_bytes = cell.get("bytes") if isinstance(cell, dict) else cell
                    if isinstance(data_bytes, bytes):
                        by_digest.setdefault(_sha(data_bytes), ["cell", path, column, row])
        else:
            by_digest.setdefault(_file_sha(path), ["file", path])
    outputs, pixels = [], {}
    for relative, kind, detail in written:
        target = data / relative
        if kind == "symlink":
            outputs.append({"name": relative, "how": "symlink", "target": detail})
            continue
        digest = detail.split(":", 1)[1]
        if os.stat(target).st_ino in inodes:
            outputs.append({"name": relative, "how": "hardlink", "source": inodes[os.stat(target).st_ino]})
        elif digest in by_digest:
            outputs.append({"name": relative, "how": "bytes", "origin": by_digest[digest]})
        elif relative.endswith(".png"):
            with Image.open(target) as image:
                pixels[f"p{len(pixels)}"] = np.asarray(image)
            outputs.append({"name": relative, "how": "png", "pixels": f"p{len(pixels) - 1}"})
        else:  # a file the conversion makes itself (a label table): written from its bytes
            outputs.append({"name": relative, "how": "made", "path": str(target)})
    np.savez(folder / "pixels.npz", **pixels)
    decoded_images = any(o["how"] == "png" for o in outputs)
    columns = {}  # parquet file -> the columns of the cells written as they are
    for output in outputs:
        if output["how"] == "bytes" and output["origin"][0] == "cell":
            columns.setdefault(output["origin"][1], set()).add(output["origin"][2])
    wanted = {_pixels_digest(array) for array in pixels.values()}
    cells = {p: _cells_of(p, wanted) for p in inputs if p.endswith(".parquet") and decoded_images}
    return {
        "inputs": [
            {
                "path": p,
                "decode": _decoder(p, decoded_images),
                "members": members.get(p),
                "cells": cells.get(p),
                "columns": sorted(columns[p]) if p in columns and not decoded_images else None,
            }
            for p in inputs
        ],
        "outputs": outputs,
        "pixels": str(folder / "pixels.npz"),
    }


def _pixels_digest(array) -> str:
    return _sha(repr((array.shape, str(array.dtype))).encode() + array.tobytes())


def _cells_of(path: str, wanted: set[str]) -> list | None:
    """The image cells of a parquet file whose pixels an output has (decoded by the floor), or None: every
    image cell, when no output is a whole cell's pixels (all crops)."""
    import io

    import numpy as np
    import pyarrow.parquet as pq
    from PIL import Image

    table, found = pq.read_table(path), []
    for column in table.column_names:
        for row, cell in enumerate(table.column(column).to_pylist()):
            data = cell.get("bytes") if isinstance(cell, dict) else None
            if isinstance(data, bytes):
                with Image.open(io.BytesIO(data)) as image:
                    if _pixels_digest(np.asarray(image)) in wanted:
                        found.append([column, row])
    return found or None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _decoder(path: str, images_made: bool) -> str:
    """How the floor decodes one input: its container opened and inflated; an image's pixels only where an
    output is made from pixels."""
    name = path.lower()
    if name.endswith((".nii.gz", ".gz")):
        return "gzip"
    if name.endswith(".nrrd"):
        return "nrrd"
    if name.endswith(".npz"):
        return "npz"
    if name.endswith(".npy"):
        return "npy"
    if name.endswith(".dcm") or _is_dicom(path):
        return "dicom"
    if name.endswith(".parquet"):
        return "parquet-images" if images_made else "parquet"
    if name.endswith(".zip"):
        return "zip"
    if name.endswith((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")) and images_made:
        return "image"  # crops are cut from its pixels, even where the file itself is kept as it is
    return "read"


def _is_dicom(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(132)[128:132] == b"DICM"


def floor_main(plan_file: Path, out: Path) -> None:
    """Decode every input, then write every output as the pipeline writes it; print the seconds of both."""
    import io
    import zipfile

    import numpy as np
    import pyarrow.parquet as pq
    from isal import igzip, isal_zlib
    from PIL import Image

    from preprocess.formats.pngio import encode_filtered, sub_filter

    plan = json.loads(plan_file.read_text())
    with np.load(plan["pixels"]) as stored:
        pixels = {name: stored[name] for name in stored.files}  # in memory before the timing
    # PNGs of one shape and type as one stack, filtered in one pass as the pipeline filters a block of images
    blocks: dict = {}
    for output in plan["outputs"]:
        if output["how"] == "png":
            array = pixels[output["pixels"]]
            blocks.setdefault((array.shape, array.dtype.str), []).append(output["pixels"])
    stacks = {key: np.stack([pixels[n] for n in names]) for key, names in blocks.items()}
    made = {o["path"]: Path(o["path"]).read_bytes() for o in plan["outputs"] if o["how"] == "made"}
    import pydicom

    started = time.perf_counter()
    tables, archives = {}, {}
    for entry in plan["inputs"]:
        path, how = entry["path"], entry["decode"]
        if how == "gzip":
            with open(path, "rb") as handle:
                igzip.decompress(handle.read())
        elif how == "nrrd":
            _nrrd_payload(path, igzip)
        elif how == "npz":
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if entry["members"] is None or info.filename in entry["members"]:
                        _member(archive, info, isal_zlib)
        elif how == "npy":
            np.load(path)
        elif how == "dicom":
            _ = pydicom.dcmread(path).pixel_array
        elif how in ("parquet", "parquet-images"):
            tables[path] = pq.read_table(path, columns=entry["columns"])  # only the kept cells' columns
            if how == "parquet-images":  # the cells outputs are made from (all when every output is a crop)
                table = tables[path]
                chosen = entry["cells"] or [
                    [column, row] for column in table.column_names for row in range(table.num_rows)
                ]
                for column, row in chosen:
                    cell = table.column(column)[row].as_py()
                    data_bytes = cell.get("bytes") if isinstance(cell, dict) else None
                    if isinstance(data_bytes, bytes):
                        with Image.open(io.BytesIO(data_bytes)) as image:
                            image.load()
        elif how == "zip":
            archives[path] = zipfile.ZipFile(path)
        elif how == "image":
            with Image.open(path) as image:
                image.load()
        else:
            with open(path, "rb") as handle:
                handle.read()
    encoded = {}
    for key, names in blocks.items():
        stack = stacks[key]
        channels = 1 if stack.ndim == 3 else stack.shape[3]
        for name, rows in zip(names, sub_filter(stack), strict=True):
            encoded[name] = encode_filtered(rows, channels, stack.dtype.itemsize)
    for output in plan["outputs"]:
        target = out / output["name"]
        target.parent.mkdir(parents=True, exist_ok=True)
        how = output["how"]
        if how == "png":
            data = encoded[output["pixels"]]
        elif how == "bytes":
            origin = output["origin"]
            if origin[0] == "file":
                data = Path(origin[1]).read_bytes()
            elif origin[0] == "member":
                if origin[1] not in archives:
                    archives[origin[1]] = zipfile.ZipFile(origin[1])
                data = archives[origin[1]].read(origin[2])
            else:
                if origin[1] not in tables:
                    tables[origin[1]] = pq.read_table(origin[1])
                table = tables[origin[1]]
                cell = table.column(origin[2])[origin[3]].as_py()
                data = cell["bytes"] if isinstance(cell, dict) else cell
        elif how == "made":
            data = made[output["path"]]
        elif how == "hardlink":
            os.link(output["source"], target)
            continue
        else:
            os.symlink(output["target"], target)
            continue
        _write_atomic(target, data)
    print(f"seconds {time.perf_counter() - started:.4f}")


def _write_atomic(target: Path, data: bytes) -> None:
    """As an atomic writer must: a new temporary name (never through a link), the bytes, then the rename."""
    tmp = target.with_name(f".{target.name}.part")
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.rename(tmp, target)


def _nrrd_payload(path: str, igzip) -> None:
    with open(path, "rb") as handle:
        data = handle.read()
    end = data.find(b"\n\n")
    header, payload = data[:end], data[end + 2 :]
    if b"encoding: gzip" in header or b"encoding: gz" in header:
        igzip.decompress(payload)


def _member(archive, info, isal_zlib) -> bytes:
    """An npz member's bytes, inflated with ISA-L (stored members read as they are)."""
    import zipfile

    if info.compress_type != zipfile.ZIP_DEFLATED:
        return archive.read(info)
    with archive.open(info) as member:  # zipfile's own reader seeks past the local header
        raw = member._fileobj.read(info.compress_size)
    return isal_zlib.decompress(raw, -15)


# --- the recipe ----------------------------------------------------------------------------------------------


def recipe_main(subset_key: str, conversion_name: str, config: Path, names_file: Path, out: Path) -> None:
    """Make every output the pipeline wrote by the re-stated rule and save it as the scripts save it."""
    from preprocess.demo import folders
    from preprocess.demo.release_images import records
    from preprocess.registry.config import load_settings

    settings = load_settings(config)
    registry = settings.registry()
    oracle = folders.release_oracles().get(subset_key)
    if oracle is None:
        from recipes import RECIPES

        oracle = RECIPES[(subset_key, conversion_name)]
    named = records.named(settings.data_basedir, registry)
    wanted = json.loads(names_file.read_text())
    if oracle.__module__.endswith(".vqa"):
        # the record-driven oracles make exactly the paths the records name, and stop at a record whose image
        # no parquet row holds: the real-size fakes' Train_Data names train images of parquet files they do
        # not write; so these get the records of the outputs being made
        named = [one for one in named if one.path in set(wanted)]

    def raw(source_id: str) -> Path:
        return Path(settings.raw_root) / registry.sources[source_id].raw_dir

    started = time.perf_counter()
    made = oracle(raw, named)
    for name in wanted:
        if name not in made:
            continue  # counted by the comparison
        value = made[name]()
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, bytes):
            target.write_bytes(value)
        elif hasattr(value, "save"):
            value.save(target)  # Pillow's default PNG, as the scripts call it
        else:  # a link (benchmarks/recipes.py Link)
            os.symlink(value.target, target)
    print(f"seconds {time.perf_counter() - started:.4f}")


def same_outputs(recipe: Path, ours: Path, written) -> tuple[int, int]:
    """(outputs of the recipe equal to the pipeline's, outputs of the pipeline the recipe made too)."""
    import numpy as np
    from PIL import Image

    equal = made = 0
    for relative, kind, _ in written:
        theirs, mine = recipe / relative, ours / relative
        if not os.path.lexists(theirs):
            continue
        made += 1
        if kind == "symlink" or os.path.islink(theirs):
            equal += os.path.realpath(theirs) == os.path.realpath(mine)
        elif relative.endswith(".png"):
            with Image.open(theirs) as a, Image.open(mine) as b:
                equal += a.mode == b.mode and np.array_equal(np.asarray(a), np.asarray(b))
        else:
            equal += theirs.read_bytes() == mine.read_bytes()
    return equal, made


# --- the table ---------------------------------------------------------------------------------------------


# The runs' own timings are given to the millisecond and vary by a few: a difference between every item and one
# under this is no figure, and the row says so instead of dividing it
RESOLUTION_S = 0.005


def report(results: list[dict]) -> str:
    lines = [
        "| conversion (costs.yaml key) | items | outputs | recipe ms/item | convert ms/item | floor ms/item | "
        "recipe / convert | convert / floor | convert once s | recipe's outputs equal | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in results:
        if "error" in row:
            lines.append(f"| {row['key']} | | | | | | | | | not measured: {row['error']} | |")
            continue
        pixels = f"{row['equal']} of {row['compared']}"
        if row["compared"] < row["outputs"]:  # the label tables the pipeline adds, say
            pixels += f" ({row['outputs'] - row['compared']} not made by the recipe)"
        per_item = {tool: _per_item(row, tool) for tool in TOOLS}
        lines.append(
            f"| {row['key']} | {row['items']} | {row['outputs']} | "
            + " | ".join(_ms(per_item[tool], row["items"]) for tool in TOOLS)
            + f" | {_ratio(per_item['recipe'], per_item['convert'], 1)} | "
            f"{_ratio(per_item['convert'], per_item['floor'])} | {row['convert_once_s']:.3f} | {pixels} | "
            f"{row['load'][0]:.1f}-{row['load'][1]:.1f} |"
        )
    return "\n".join(lines)


def _per_item(row: dict, tool: str) -> float | None:
    """Seconds an item at steady state, None where every item and one differ by less than the resolution."""
    runs = row["runs"]
    difference = statistics.median(runs[f"{tool} all"]) - statistics.median(runs[f"{tool} one"])
    return difference / (row["items"] - 1) if difference >= RESOLUTION_S else None


def _ratio(a: float | None, b: float | None, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}x" if a is not None and b else "-"


def _ms(seconds: float | None, items: int) -> str:
    if seconds is None:
        return f"< {RESOLUTION_S / (items - 1) * 1e3:.2g}"
    return f"{seconds * 1e3:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fakes", type=Path, help="real-size fakes written earlier (with --keep)")
    parser.add_argument("--keep", type=Path, help="write the fakes here and keep them")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="only these costs.yaml keys")
    parser.add_argument("--cpu", default="1", help="the CPU every timed run is pinned to")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "side_by_side")
    parser.add_argument("--table", type=Path, help="print the table of an earlier run's results.json, run nothing")
    args = parser.parse_args()
    if args.table:
        print(report(json.loads(args.table.read_text())))
        return
    import yaml

    from preprocess.errors import PreprocessError
    from preprocess.registry.config import load_settings

    with tempfile.TemporaryDirectory() as scratch:
        fakes = args.fakes or args.keep or Path(scratch) / "fakes"
        if args.fakes is None:
            from preprocess.demo.real import write_real

            write_real(fakes, ITEMS, counts=COUNTS)
        values = yaml.safe_load((fakes / "config.yaml").read_text())
        settings = load_settings(fakes / "config.yaml")
        results = []
        args.out.mkdir(parents=True, exist_ok=True)
        with fresh_folders(args.out / "runs") as folders:
            for key, (subset, conversion) in rows(settings, args.only).items():
                print(f"{key}: {subset.key}/{conversion.name}", file=sys.stderr, flush=True)
                config = fakes / "config.yaml"
                if conversion.split != "test":  # a conversion built for the train split only
                    config = Path(scratch) / f"config-{key.replace('/', '-')}.yaml"
                    config.write_text(yaml.safe_dump({**values, "splits": {subset.key: "all"}}))
                try:
                    results.append(measure_row(key, subset, conversion, config, fakes, folders, args.repeats, args.cpu))
                except (RuntimeError, KeyError, PreprocessError) as exc:
                    results.append({"key": key, "error": str(exc).splitlines()[0][:200]})
                    print(f"  {key}: not measured: {exc}", file=sys.stderr)
                (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(report(results))
    print(f"\n{os.cpu_count()} CPUs; medians of {args.repeats} runs of each command, start-up excluded")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--trace":
        split = sys.argv.index("--")
        trace_main(Path(sys.argv[2]), Path(sys.argv[4]), sys.argv[split + 1 :])
    elif len(sys.argv) > 1 and sys.argv[1] == "--floor":
        floor_main(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--recipe":
        recipe_main(sys.argv[2], sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]), Path(sys.argv[6]))
    else:
        main()
