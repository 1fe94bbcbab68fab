"""The demo's release images: what the benchmark's release ships for the demo's open subsets, made from the
demo's raw files by an independent statement of each reference rule (the benchmark's scripts, as
docs/conversions/ describes them), never by the pipeline's conversions, and a LICENSE_NOTICE.md in each image
folder the release may not redistribute.

No module here imports preprocess.convert, preprocess.volumes or preprocess.formats (a test parses the
imports): a rebuild compared with these files compares two statements of each rule. PNGs are saved with
Pillow (outputs.py), so their bytes differ from the pipeline's while their pixels must not.

A release file is written where the demo's release records (its task JSONs and Train_Data JSONLs) name it,
as the real release's images are the ones its records resolve to; a named path of a shipped subset that its
oracle does not make stops the demo, naming it.
"""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import LEFT_OUT
from preprocess.demo.release_images import crops, folders, medmnist, notices, parquets, records, volumes, vqa
from preprocess.demo.release_images.outputs import write
from preprocess.errors import PreprocessError

# The demo's open subsets whose images its release ships, each with its oracle.
SHIPPED = {
    "2D_Task/APTOS": folders.aptos,
    "2D_Task/ISIC-2019": folders.isic2019,
    "2D_Task/Brain-Tumor-MRI": folders.brain_tumor_mri,
    "2D_Task/Kvasir": folders.kvasir,
    "2D_Task/lc25000": folders.lc25000,
    "2D_Task/REtinal": folders.rfmid,
    "3D_Task/M3D": folders.m3d,
    "2D_Task/PMC": folders.pmc_vqa,
    "2D_Task/OmniMedVQA_vqa": folders.omnimedvqa,
    "2D_Task/BloodMNIST": medmnist.bloodmnist,
    "2D_Task/ChestMNIST": medmnist.chestmnist,
    "2D_Task/OrganAMNIST": medmnist.organamnist,
    "3D_Task/Organ3dMNIST": medmnist.organmnist3d,
    "2D_Task/PanNuke": parquets.pannuke,
    "2D_Task/ROCO-VQA": parquets.roco_qa,
    "2D_Task/MedPIX": vqa.medpix,
    "2D_Task/PathVQA": vqa.pathvqa,
    "2D_Task/VQA-RAD": vqa.vqa_rad,
    "2D_Task/PanNuke_VG": crops.pannuke_vg,
    "2D_Task/SkinLesion": crops.skin_lesion,
    "2D_Task/UltrasoundNerve": crops.ultrasound_nerve,
    "2D_Task/Gastrointestinal": crops.gastrointestinal,
    "3D_Task/BraTS2023": volumes.brats_ped,
    "3D_Task/BraTS_MEN": volumes.brats_men,
    "3D_Task/ChirrMRI600": volumes.chirrmri600,
    "3D_Task/CirrMRI600_Cross": volumes.cirrmri600_cross,
    "3D_Task/HaN-Seg": volumes.hanseg,
    "3D_Task/SynthRAD": volumes.synthrad,
    "3D_Task/RadGen_CT": volumes.radgenome,
    "3D_Task/MMDental": volumes.mmdental,
}


def not_shipped(registry) -> dict[str, str]:
    """Why the release ships no images for the rest of the registry's image subsets (text subsets have none)."""
    return {
        **{
            key: "restricted: the card's placeholder, LICENSE_NOTICE.md, instead"
            for key in notices.restricted(registry)
        },
        **{key: f"left out of the demo: {why}" for key, why in LEFT_OUT.items()},  # no raw data, no task files
    }


def subset_folder(subset) -> str:
    """The folder under DATA_BASEDIR that holds all of a subset's images: the first two parts of its root."""
    return "/".join(Path(subset.image_root).parts[:2])


def write_release_images(raw_root: Path, data_basedir: Path, registry) -> dict[str, int]:
    """Write the release's images of the SHIPPED subsets and the restricted folders' notices into
    DATA_BASEDIR (whose release files are in place); returns the count of files per subset."""
    named = records.named(data_basedir, registry)
    paths = {one.path for one in named}

    def raw(source_id: str) -> Path:  # the source's folder under the raw root, as the registry names it
        return Path(raw_root) / registry.sources[source_id].raw_dir

    counts = {}
    for key, oracle in SHIPPED.items():
        made = oracle(raw, named)
        wanted = sorted(p for p in paths if p.startswith(subset_folder(registry.subset(key)) + "/"))
        unmade = [p for p in wanted if p not in made]
        if unmade:
            raise PreprocessError(
                f"the demo's release names {len(unmade)} {key} file(s) that its oracle does not make, such as "
                f"{unmade[0]}: fix preprocess/demo/release_images or the demo's release records"
            )
        for name in wanted:
            write(data_basedir, name, made[name]())
        counts[key] = len(wanted)
    for key, folder in notices.restricted(registry).items():
        write(data_basedir, f"{folder}/{notices.NOTICE}", notices.notice(registry.subset(key), registry).encode())
    return counts
