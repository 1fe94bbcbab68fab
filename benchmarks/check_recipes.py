"""Check benchmarks/recipes.py against the pipeline: for each recipe, the pipeline's convert of that conversion
on the same raw tree, then the same set of names and the same content in each.

Content: a PNG's pixels (both decoded with Pillow, the arrays compared: the two encoders' bytes differ), the
bytes of a file the recipe keeps as the upstream's, and for a link the folder both targets resolve to.

Each conversion is built into a DATA_BASEDIR of its own (a copy of the demo's release records, the task JSONs
and Train_Data JSONLs, which the record-driven conversions read), so that its image folders hold that
conversion's outputs and nothing else; `splits: all` lets the train twins run (a test conversion runs with
`splits: test`, which asks for no train raw files: the real-size fakes have none of some sources).

    python benchmarks/check_recipes.py [--out benchmarks/out/check_recipes]                 # the demo
    python benchmarks/check_recipes.py --real-sizes --items 2 --sources vindr_cxr mrnet    # real-size fakes
    python benchmarks/check_recipes.py --only 2D_Task/VindrCXR                             # some subsets
    python benchmarks/check_recipes.py --vindr-png-copy        # VinDr-CXR from a PNG copy of its DICOMs
    python benchmarks/check_recipes.py --mammo-physionet       # VinDr-Mammo's PhysioNet route too

Prints one line per conversion and writes results.tsv in --out; exit status 1 when any differs or the pipeline
fails (rows "not checked", for want of the raw files, and "no outputs" on both sides are not failures).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from recipes import RECIPES, VARIANT_RECIPES, Link  # noqa: E402

from preprocess.demo.release_images import records  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402

IMAGE_TREES = ("2D_Images", "3D_Images")  # where conversions write; the release records sit beside them
# (source, variant) -> a file of that copy (relative to the source's raw folder): the demo has the default copy
# only, the real-size fakes have both; a raw tree without it leaves the variant's row unchecked
VARIANT_FILES = {("vindr_mammo", "physionet"): "finding_annotations.csv"}


def make_demo(folder: Path, real_sizes: bool, items: int, sources: list[str] | None) -> None:
    """The demo's raw tree and release records (no release images: the restricted subsets have none anyway)."""
    if (folder / "raw").is_dir():
        return  # made by an earlier run with the same options (the folder name says which)
    command = [sys.executable, "-m", "preprocess", "demo", str(folder), "--no-release-images"]
    if real_sizes:
        command += ["--real-sizes", "--items", str(items), *(["--sources", *sources] if sources else [])]
    subprocess.run(command, check=True, cwd=REPO)


def with_vindr_png_copy(demo: Path, target: Path) -> Path:
    """A copy of the demo with the other VinDr-CXR route: a full-resolution PNG copy of the DICOMs in
    vindr-cxr/VinDr-CXR-dataset/ai-vinbigdata/{split}/<image_id>.png (the kind the authors cut from), made
    here as 16-bit PNGs of the stored values, so that both the hard-linked query files and crops in a 16-bit
    mode are compared. Only vindr-cxr's raw folder is copied: the conversion reads no other."""
    import pydicom

    if (target / "raw").is_dir():
        return target
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(demo / "DATA_BASEDIR", target / "DATA_BASEDIR")
    shutil.copy(demo / "registry-overrides.yaml", target / "registry-overrides.yaml")
    shutil.copytree(demo / "raw" / "vindr-cxr", target / "raw" / "vindr-cxr")
    for dicom in sorted((target / "raw" / "vindr-cxr").glob("*/*.dicom")):
        png = target / "raw" / "vindr-cxr" / "VinDr-CXR-dataset" / "ai-vinbigdata" / dicom.parent.name
        png.mkdir(parents=True, exist_ok=True)
        stored = pydicom.dcmread(str(dicom)).pixel_array.astype(np.uint16)
        Image.fromarray(stored).save(png / f"{dicom.stem}.png")
    return target


def with_mammo_physionet(demo: Path, target: Path) -> Path:
    """A copy of the demo whose vindr-mammo folder also holds the PhysioNet route's DICOMs (the demo fakes'
    own writer: one MONOCHROME1 image and one FOR PROCESSING image, which both routes leave out)."""
    from preprocess.datasets.vindr_mammo.fakes import vindr_mammo_physionet

    if (target / "raw").is_dir():
        return target
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(demo / "DATA_BASEDIR", target / "DATA_BASEDIR")
    shutil.copy(demo / "registry-overrides.yaml", target / "registry-overrides.yaml")
    shutil.copytree(demo / "raw" / "vindr-mammo", target / "raw" / "vindr-mammo")
    vindr_mammo_physionet(target / "raw" / "vindr-mammo")
    return target


def overrides(demo: Path, source_id: str, variant: str | None) -> Path:
    """The registry overrides of the demo, or of one source variant: the demo's pin the default copy's files
    (their paths and MD5s), which would make a variant read the default copy's files. The real-size fakes
    write a variant's own (variants/<source>-<variant>/); elsewhere the source's entry is left out."""
    if variant is None:
        return demo / "registry-overrides.yaml"
    own = demo / "variants" / f"{source_id}-{variant}" / "registry-overrides.yaml"
    if own.is_file():
        return own
    pinned = yaml.safe_load((demo / "registry-overrides.yaml").read_text())
    pinned.get("sources", {}).pop(source_id, None)
    path = demo / f"registry-overrides-{source_id}-{variant}.yaml"
    path.write_text(yaml.safe_dump(pinned))
    return path


def fresh_basedir(demo: Path, target: Path) -> Path:
    """A copy of the demo's DATA_BASEDIR without image trees: its task JSONs and Train_Data JSONLs."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(demo / "DATA_BASEDIR", target, ignore=lambda d, names: [n for n in names if n in IMAGE_TREES])
    return target


def pipeline_outputs(data_basedir: Path) -> dict[str, Path]:
    """Name (relative to DATA_BASEDIR) -> path of every file and link under the image trees; a link to a
    folder is one output, never walked into."""
    found = {}
    for tree in IMAGE_TREES:
        for root, dirs, files in os.walk(data_basedir / tree):
            for name in dirs + files:
                path = Path(root) / name
                if path.is_symlink() or name in files:
                    found[path.relative_to(data_basedir).as_posix()] = path
    return found


def same(expected, path: Path) -> str | None:
    """None when the pipeline's file at `path` has the recipe's content, else what differs."""
    if isinstance(expected, Link):
        if not path.is_symlink():
            return "the recipe makes a link, the pipeline a file"
        mine, theirs = os.path.realpath(expected.target), os.path.realpath(path)
        return None if mine == theirs else f"link to {theirs}, the recipe's to {mine}"
    if path.is_symlink():
        return "the pipeline makes a link, the recipe a file"
    if isinstance(expected, bytes):
        return None if path.read_bytes() == expected else "other bytes"
    with Image.open(path) as image:
        theirs = np.asarray(image)
    mine = np.asarray(expected)
    if mine.shape != theirs.shape:
        return f"shape {theirs.shape}, the recipe's {mine.shape}"
    if not np.array_equal(mine, theirs):
        wrong = np.count_nonzero(mine != theirs)
        return f"{wrong} of {mine.size} values differ (largest by {np.abs(mine.astype(int) - theirs).max()})"
    return None


def check(demo: Path, out: Path, key: str, conversion: str, variant: str | None, recipe, registry) -> dict:
    label = f"{key}/{conversion}" + (f" [{variant}]" if variant else "")
    build = out / "builds" / label.replace("/", "+").replace(" ", "").replace("[", "@").replace("]", "")
    data = fresh_basedir(demo, build / "DATA")
    subset = registry.subset(key)
    train = any(c.name == conversion and c.split == "train" for conv in subset.conversions for c in conv.twins())
    config = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(data),
        "registry_overrides": str(overrides(demo, subset.source_ids[0], variant)),
        "subsets": [key],
        "splits": "all" if train else "test",  # a train twin runs with all; a test one needs no train raw files
        "source_variants": {subset.source_ids[0]: variant} if variant else {},
    }
    (build / "config.yaml").write_text(yaml.safe_dump(config))
    row = {"conversion": label, "recipe": 0, "pipeline": 0, "only_recipe": "", "only_pipeline": "", "differ": ""}
    needed = VARIANT_FILES.get((subset.source_ids[0], variant))
    if needed and not (demo / "raw" / registry.sources[subset.source_ids[0]].raw_dir / needed).exists():
        row["result"] = f"not checked: this raw tree has no {variant} copy ({needed})"
        return row
    command = [sys.executable, "-m", "preprocess", "convert", key, "--config", str(build / "config.yaml")]
    command += ["--conversion", conversion, "--results", str(build / "results")]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if run.returncode:
        lines = run.stderr.strip().splitlines() or ["?"]
        missing = next((x.strip(" -") for x in lines if "missing:" in x), None)
        if train and missing:  # the real-size fakes write the test split of most sources only
            row["result"] = f"not checked: this raw tree has no train files ({missing})"
        else:
            row["result"] = "pipeline failed: " + (missing or lines[-1].strip())
        return row

    def raw(source_id: str) -> Path:
        return demo / "raw" / registry.sources[source_id].raw_dir

    made = recipe(raw, records.named(data, registry))
    theirs = pipeline_outputs(data)
    differ = {}
    for name in sorted(set(made) & set(theirs)):
        why = same(made[name](), theirs[name])
        if why:
            differ[name] = why
    only_recipe, only_pipeline = sorted(set(made) - set(theirs)), sorted(set(theirs) - set(made))
    row.update(recipe=len(made), pipeline=len(theirs), only_recipe=only_recipe, only_pipeline=only_pipeline)
    row["differ"] = differ
    matches = not (only_recipe or only_pipeline or differ) and made
    row["result"] = "match" if matches else ("no outputs" if not made and not theirs else "DIFFER")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "check_recipes")
    parser.add_argument("--real-sizes", action="store_true", help="the real-size fakes besides the demo")
    parser.add_argument("--items", type=int, default=2, help="--real-sizes: items a source")
    parser.add_argument("--sources", nargs="+", help="--real-sizes: only these sources")
    parser.add_argument("--only", nargs="+", help="only these subsets (keys)")
    parser.add_argument(
        "--mammo-physionet", action="store_true", help="VinDr-Mammo only, on the demo given PhysioNet DICOMs too"
    )
    parser.add_argument(
        "--vindr-png-copy", action="store_true", help="VinDr-CXR only, on the demo given a PNG copy of its DICOMs"
    )
    args = parser.parse_args()
    name = "demo" if not args.real_sizes else f"real-{args.items}-" + "-".join(args.sources or ["all"])
    demo = (args.out / name).resolve()
    make_demo(demo, args.real_sizes, args.items, args.sources)
    if args.mammo_physionet:
        name += "-mammo-physionet"
        demo, args.only = with_mammo_physionet(demo, (args.out / name).resolve()), ["2D_Task/VindrMammo"]
    if args.vindr_png_copy:
        name += "-vindr-png-copy"
        demo, args.only = with_vindr_png_copy(demo, (args.out / name).resolve()), ["2D_Task/VindrCXR"]
    registry = load_registry()
    todo = [(key, conversion, None, recipe) for (key, conversion), recipe in RECIPES.items()]
    todo += [(key, conversion, variant, recipe) for (key, conversion, variant), recipe in VARIANT_RECIPES.items()]
    rows = []
    for key, conversion, variant, recipe in todo:
        if args.only and key not in args.only:
            continue
        row = check(demo, args.out / name, key, conversion, variant, recipe, registry)
        rows.append(row)
        print(f"{row['conversion']:<52} recipe {row['recipe']:>4}  pipeline {row['pipeline']:>4}  {row['result']}")
        for title in ("only_recipe", "only_pipeline"):
            for one in row[title][:5]:
                print(f"    {title.replace('_', ' ')}: {one}")
        for one, why in list(row["differ"].items())[:5] if row["differ"] else []:
            print(f"    differs: {one}: {why}")
    with open(args.out / name / "results.tsv", "w", encoding="utf-8") as handle:
        handle.write("conversion\trecipe\tpipeline\tonly_recipe\tonly_pipeline\tdiffer\tresult\n")
        for row in rows:
            counts = [len(row["only_recipe"]), len(row["only_pipeline"]), len(row["differ"])]
            handle.write("\t".join(map(str, [row["conversion"], row["recipe"], row["pipeline"], *counts])))
            handle.write(f"\t{row['result']}\n")
    agreed = ("match", "no outputs")  # no outputs: neither side makes any (a split the raw tree has no rows of)
    failed = [row for row in rows if row["result"] not in agreed and not row["result"].startswith("not checked")]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
