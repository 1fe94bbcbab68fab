"""PMC-VQA (Hugging Face RadGenome/PMC-VQA): the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

import zipfile
from pathlib import Path

from preprocess.demo import archives, fields
from preprocess.demo.files import encoded, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import folders

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/PMC": folders.pmc_vqa,
}


def demo(base: Path) -> None:
    base.mkdir(parents=True, exist_ok=True)
    figures = ["PMC8253873_Fig2_288.jpg", "PMC3298543_F1.jpg"]
    with zipfile.ZipFile(base / "images.zip", "w") as archive:
        for i, name in enumerate(figures):
            archives.zip_add(archive, f"figures/{name}", encode(pattern(300 + i, (32, 32)), "JPEG"))
        archives.zip_add(archive, "../evil.jpg", b"escape attempt")
        archives.zip_add(archive, "/abs.jpg", b"absolute")
        archives.zip_add(archive, "figures/link.jpg", b"/etc/passwd", link=True)
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in [*figures, "PMC0000000_missing.jpg"])
    (base / "test.csv").write_text(
        "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n" + rows
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "images.zip of RGB JPEG 800x600 figures (stored, as the upload's zip), test.csv",
    "PMC-VQA (Zhang et al. 2023): PubMed Central figures [size assumed]",
)
REAL_SEED = 21  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    import zipfile

    names = [f"PMC{seed * 100000 + k}_Fig{k % 5 + 1}.jpg" for k in range(n)]
    base.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "images.zip", "w") as archive:
        for k, name in enumerate(names):
            archives.zip_add(archive, f"figures/{name}", encoded(fields.photo((600, 800), seed + k), "JPEG"))
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in names)
    put(base / "test.csv", "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n" + rows)
    return {}
