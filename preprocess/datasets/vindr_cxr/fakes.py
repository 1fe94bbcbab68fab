"""VinDr-CXR 1.0.0: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`,
`REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import dicoms, fields
from preprocess.demo.files import item_id, put
from preprocess.demo.real_sizes import Size

CXR_TEST = ["0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"]


CXR_TRAIN = ["1b2c3d4e5f60718293a4b5c6d7e8f901"]


def demo(base: Path) -> None:
    """Test: a MONOCHROME1 image with a two-valued window and a JPEG 2000 one; train: one image with a class
    the test split lacks (Calcification, which moves the sorted class ids). The test image's three Nodule/Mass
    boxes merge in an order that matters: the first two merge and their union goes to the END of the list."""
    from pydicom.uid import JPEG2000Lossless

    first, second = CXR_TEST
    dicoms._dicom(
        base / "test" / f"{first}.dicom", 4095 - dicoms.xray(1), "MONOCHROME1", window=([1900, 2000], [3800, 4000])
    )
    dicoms._dicom(base / "test" / f"{second}.dicom", dicoms.xray(2), compress=JPEG2000Lossless)
    dicoms._dicom(base / "train" / f"{CXR_TRAIN[0]}.dicom", dicoms.xray(3), window=([2000], [4000]))
    test_rows = [
        f"{first},Nodule/Mass,20.4,30.9,30.2,40.7",
        f"{first},Nodule/Mass,21.0,31.0,31.8,41.0",  # IoU with the first 0.68: merged, union appended
        f"{first},Nodule/Mass,50.0,60.0,62.0,70.0",  # alone: it becomes crop 0
        f"{first},Aortic enlargement,40.0,10.0,60.0,30.0",
        f"{first},Aortic enlargement,45.7,15.2,50.9,20.8",  # inside the first: merged
        f"{second},Cardiomegaly,10.0,50.0,70.0,80.0",
        f"{second},Nodule/Mass,-3.5,2.0,8.0,9.0",  # floored at 0, grown to 28 px
        f"{second},No finding,,,,",
    ]
    train_rows = [
        f"{CXR_TRAIN[0]},R8,Calcification,12.0,14.0,30.0,33.0",
        f"{CXR_TRAIN[0]},R9,Aortic enlargement,41.0,11.0,59.0,29.0",
        f"{CXR_TRAIN[0]},R10,No finding,,,,",
    ]
    tables = base / "annotations"
    dicoms._write(
        tables / "annotations_test.csv",  # the test file has no rad_id
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(test_rows) + "\n",
    )
    dicoms._write(
        tables / "annotations_train.csv",
        "image_id,rad_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(train_rows) + "\n",
    )
    dicoms._write(tables / "image_labels_test.csv", f"image_id,Nodule/Mass,Other disease\n{first},1,0\n{second},1,0\n")
    dicoms._write(
        tables / "image_labels_train.csv", f"image_id,rad_id,Calcification,Other diseases\n{CXR_TRAIN[0]},R8,1,0\n"
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "DICOM 2880x2400, 16 bits allocated; even items 12 bits stored uncompressed, odd items 14 bits JPEG 2000 lossless",
    "VinDr-CXR paper (Nguyen et al. 2022, Sci Data 9:429): bit depth 12-16, sizes about 2000-3500 px; "
    "2d-images.md 5: transfer syntax unconfirmed, both covered",
)
REAL_SEED = 0  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    shape = (2880, 2400)
    ids = [item_id("vindr_cxr", seed, k) for k in range(n)]
    rows, labels = [], []
    for k, image_id in enumerate(ids):
        dicoms.xray_dicom(base / "test" / f"{image_id}.dicom", seed + k, shape)
        for part, name in enumerate(("Nodule/Mass", "Cardiomegaly", "Aortic enlargement")):
            x0, y0, x1, y1 = fields.box(seed + k, *shape, part)
            rows.append(f"{image_id},{name},{x0},{y0},{x1},{y1}")
        labels.append(f"{image_id},1,0")
    put(
        base / "annotations" / "annotations_test.csv",
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(rows) + "\n",
    )
    put(base / "annotations" / "annotations_train.csv", "image_id,rad_id,class_name,x_min,y_min,x_max,y_max\n")
    put(
        base / "annotations" / "image_labels_test.csv",
        "image_id,Nodule/Mass,Other disease\n" + "\n".join(labels) + "\n",
    )
    put(base / "annotations" / "image_labels_train.csv", "image_id,rad_id,Calcification,Other diseases\n")
    return {}
