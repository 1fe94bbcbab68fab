"""Peak memory of a conversion job against the size of its input: each kind that reads a big container (npz
members, parquet row groups, zip members) is built at 1x and 4x the items, at the upstream's real item size,
each run a fresh `python -m preprocess convert` process, and its peak RSS (ru_maxrss, the largest of the job's
processes: forked helpers included) is printed with the ratio of the two. Flat memory means a ratio near 1.

    python benchmarks/peak_memory.py [--items N] [--kinds medmnist_gray,...] [--baseline ../main] [--keep DIR]

Items per kind at 1x are N times the kind's factor below (default N=1); inputs (real sizes):
  medmnist_gray  npz_unpack_2d, OrganAMNIST test split at 224 px, uint8 gray (MedMNIST+), 2 workers
  medmnist_rgb   npz_unpack_2d, BloodMNIST test split at 224 px, uint8 RGB, 2 workers
  medmnist_gray_1w  the same as medmnist_gray with one worker (no helpers: the job reads its own chunks)
  medsegbench    mask_bbox_crop, PolypGen test split at 512 px: RGB images and uint8 0/1 masks
  roco           parquet_extract, ROCO-QA: 512x512 gray JPEGs, row groups of 64 rows
  vqa_rad        parquet_records, VQA-RAD: 512x512 gray JPEGs, row groups of 64 rows, one record per row
  pmc_vqa        archive_extract, PMC-VQA images.zip: 640x480 RGB JPEG figures, one listed per row of test.csv
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from preprocess.demo import write_demo  # noqa: E402

# Runs the command given and prints the largest RSS (KiB) of it and every process it waited for, and their CPU
# seconds (user and system: on a shared machine a steadier measure of the work than the wall time).
MEASURE = (
    "import resource, subprocess, sys; "
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "used = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(used.ru_maxrss, used.ru_utime + used.ru_stime)"
)


def smooth_images(count: int, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Images with the look (and the compressibility) of scans: a smooth field per image plus mild noise."""
    rng = np.random.default_rng(seed)
    height, width = shape[:2]
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    out = np.empty((count, *shape), np.uint8)
    for i in range(count):
        fx, fy, phase = [*rng.uniform(0.01, 0.05, 2).tolist(), rng.uniform(0, 6.3)]
        field = 128 + 80 * np.sin(fx * x + phase) * np.cos(fy * y)
        noise = rng.normal(0, 12, shape).astype(np.float32)
        image = (field[..., None] if len(shape) == 3 else field) + noise
        out[i] = np.clip(image, 0, 255).astype(np.uint8)
    return out


def jpeg(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _set_counts(overrides: dict, source: str, file_id: str, counts: dict) -> None:
    entry = next(f for f in overrides["sources"][source]["files"] if f["id"] == file_id)
    entry["npz"]["counts"] = counts


def medmnist(demo: Path, overrides: dict, items: int, flag: str, channels: int) -> None:
    shape = (224, 224, 3) if channels == 3 else (224, 224)
    rng = np.random.default_rng(1)
    arrays = {"test_images": smooth_images(items, shape, 2), "test_labels": rng.integers(0, 8, (items, 1))}
    for split in ("train", "val"):
        arrays[f"{split}_images"] = smooth_images(1, shape, 3)
        arrays[f"{split}_labels"] = np.zeros((1, 1), np.int64)
    np.savez_compressed(demo / "raw" / "MedMNIST" / f"{flag}_224.npz", **arrays)
    _set_counts(overrides, "medmnist", flag, {"train": 1, "val": 1, "test": items})


def medsegbench(demo: Path, overrides: dict, items: int) -> None:
    folder = demo / "raw" / "MedSegBench"
    folder.mkdir(parents=True, exist_ok=True)
    masks = np.zeros((items, 512, 512), np.uint8)
    for i in range(items):  # a polyp-sized blob, somewhere different in each image
        masks[i, 100 + i % 200 : 260 + i % 200, 150 + i % 150 : 330 + i % 150] = 1
    arrays = {"test_images": smooth_images(items, (512, 512, 3), 4), "test_label": masks}
    for split in ("train", "val"):
        arrays[f"{split}_images"], arrays[f"{split}_label"] = arrays["test_images"][:1], masks[:1]
    np.savez_compressed(folder / "polypgen_512.npz", **arrays)


def _parquet(path: Path, columns: dict, images: list[bytes]) -> None:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table({"image": pa.array([{"bytes": b, "path": None} for b in images], image), **columns})
    pq.write_table(table, path, row_group_size=64)


def roco(demo: Path, overrides: dict, items: int) -> None:
    data = demo / "raw" / "ROCO-QA" / "data"
    (test,) = data.glob("Test-*.parquet")
    images = [jpeg(image) for image in smooth_images(items, (512, 512), 5)]
    ids = [f"ROCO_{i:05d}" for i in range(items)]
    _parquet(test, {"image_id": ids, "question": ["What is shown?"] * items, "answer": ["CT"] * items}, images)


def vqa_rad(demo: Path, overrides: dict, items: int) -> None:
    data = demo / "raw" / "vqa-rad" / "data"
    (test,) = data.glob("test-*.parquet")
    questions = [f"Is there a fracture in image {i}?" for i in range(items)]
    images = [jpeg(image) for image in smooth_images(items, (512, 512), 6)]
    _parquet(test, {"question": questions, "answer": ["no"] * items}, images)
    records = [
        {
            "qry_inst": "<|image_1|> Answer the question about the image.",
            "qry_text": question,
            "qry_img_path": f"head/synpic{i:05d}.png",
            "tgt_text": ["no", "yes"],
        }
        for i, question in enumerate(questions)
    ]
    (demo / "DATA_BASEDIR" / "2D_Task" / "VQA-RAD" / "VQA_test.json").write_text(json.dumps(records))


def pmc_vqa(demo: Path, overrides: dict, items: int) -> None:
    base = demo / "raw" / "PMC-VQA"
    names = [f"PMC{1000000 + i}_F1.jpg" for i in range(items)]
    with zipfile.ZipFile(base / "images.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for name, image in zip(names, smooth_images(items, (480, 640, 3), 7), strict=True):
            archive.writestr(f"figures/{name}", jpeg(image))
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in names)
    header = "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n"
    (base / "test.csv").write_text(header + rows)


# kind: (writer, factor (items at 1x per unit of --items), subset, conversion, workers)
KINDS = {
    "medmnist_gray": (lambda d, o, n: medmnist(d, o, n, "organamnist", 1), 1000, "2D_Task/OrganAMNIST", None, 2),
    "medmnist_rgb": (lambda d, o, n: medmnist(d, o, n, "bloodmnist", 3), 500, "2D_Task/BloodMNIST", None, 2),
    "medmnist_gray_1w": (lambda d, o, n: medmnist(d, o, n, "organamnist", 1), 1000, "2D_Task/OrganAMNIST", None, 1),
    "medsegbench": (medsegbench, 64, "2D_Task/Gastrointestinal", "polypgen", 1),
    "roco": (roco, 300, "2D_Task/ROCO-VQA", None, 1),
    "vqa_rad": (vqa_rad, 300, "2D_Task/VQA-RAD", None, 1),
    "pmc_vqa": (pmc_vqa, 300, "2D_Task/PMC", None, 1),
}


def prepare(template: Path, folder: Path, kind: str, items: int) -> Path:
    """A fresh copy of the demo with the kind's input at `items` items, and its config.yaml."""
    writer = KINDS[kind][0]
    demo = folder / f"{kind}-{items}"
    shutil.copytree(template, demo, symlinks=True)
    overrides_path = demo / "registry-overrides.yaml"
    overrides = yaml.safe_load(overrides_path.read_text())
    writer(demo, overrides, items)
    overrides_path.write_text(yaml.safe_dump(overrides))
    config = {
        "demo": None,
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "registry_overrides": str(overrides_path),
        "verify_checksums": False,
    }
    (demo / "config.yaml").write_text(yaml.safe_dump(config))
    return demo


def run(prepared: Path, kind: str, code: Path) -> tuple[int, float, int]:
    """(peak RSS in KiB, CPU seconds, files written) of one conversion job of `code` (a checkout) on a copy of
    a prepared demo (its raw files are only read; its DATA_BASEDIR is written)."""
    _, _, subset, conversion, workers = KINDS[kind]
    demo = prepared.with_name(prepared.name + "-run")
    shutil.copytree(prepared, demo, symlinks=True)
    config = demo / "config.yaml"
    config.write_text(config.read_text().replace(str(prepared), str(demo)))
    (demo / "registry-overrides.yaml").write_text((prepared / "registry-overrides.yaml").read_text())
    command = [sys.executable, "-m", "preprocess", "convert", subset, "--config", str(config)]
    command += ["--results", str(demo / "results"), "--workers", str(workers)]
    command += ["--conversion", conversion] if conversion else []
    before = sum(1 for p in (demo / "DATA_BASEDIR").rglob("*") if p.is_file())
    # Run from the demo folder (`python -m` puts the working folder first on sys.path); PYTHONPATH picks the code.
    environment = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True, cwd=demo, env=environment
    )
    peak, seconds = out.stdout.split()
    written = sum(1 for p in (demo / "DATA_BASEDIR").rglob("*") if p.is_file()) - before
    shutil.rmtree(demo)
    return int(peak), float(seconds), written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=float, default=1.0, help="scale of the 1x item counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, of: " + ", ".join(KINDS))
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. of main) measured on the same inputs")
    parser.add_argument("--keep", type=Path, help="work folder (default: a temporary one, removed)")
    args = parser.parse_args()
    codes = {"this code": REPO, **({f"baseline {args.baseline}": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        template = write_demo(folder / "template")
        print("| kind | code | items 1x | peak RSS 1x (MB) | items 4x | peak RSS 4x (MB) | 4x / 1x | CPU s 1x, 4x |")
        print("|---|---|---|---|---|---|---|---|")
        for kind in args.kinds.split(","):
            items = max(1, round(KINDS[kind][1] * args.items))
            started = time.perf_counter()
            inputs = [prepare(template, folder, kind, count) for count in (items, 4 * items)]
            for name, code in codes.items():
                (small, small_cpu, small_files), (large, large_cpu, large_files) = (
                    run(prepared, kind, code) for prepared in inputs
                )
                print(
                    f"| {kind} | {name} | {items} | {small / 1024:.0f} | {4 * items} | {large / 1024:.0f} | "
                    f"{large / small:.2f} | {small_cpu:.1f}, {large_cpu:.1f} |",
                    flush=True,
                )
                print(f"  ({kind}, {name}: files written {small_files}, {large_files})", file=sys.stderr, flush=True)
            raw = sum(p.stat().st_size for p in (inputs[1] / "raw").rglob("*") if p.is_file())
            print(
                f"  ({kind}: raw input at 4x {raw / 1e6:.0f} MB; {time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
            for prepared in inputs:
                shutil.rmtree(prepared)


if __name__ == "__main__":
    main()
