"""The real item of every source the real-size fakes write (preprocess/demo/real.py): what it is and where the
figure comes from. docs/benchmarks.md shows this table; costs.yaml entries name the item they were measured on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    """One source's real item: what it is, and where the figure comes from."""

    item: str
    basis: str


# The real item of every source the generator writes at real size (docs/benchmarks.md shows this table).
SIZES = {
    "vindr_cxr": Size(
        "DICOM 2880x2400, 16 bits allocated; even items 12 bits stored uncompressed, odd items 14 bits JPEG 2000 "
        "lossless",
        "VinDr-CXR paper (Nguyen et al. 2022, Sci Data 9:429): bit depth 12-16, sizes about 2000-3500 px; "
        "2d-images.md 5: transfer syntax unconfirmed, both covered",
    ),
    "vindr_mammo": Size(
        "derived copy: 8-bit PNG 1520x912 (Mammo-CLIP's resize); PhysioNet route: DICOM 3518x2800, 12 bits, "
        "uncompressed and JPEG 2000 lossless",
        "Mammo-CLIP preprocessing (resize to 1520x912); VinDr-Mammo paper (Nguyen et al. 2023, Sci Data "
        "10:277) and its finding_annotations.csv height/width 3518x2800",
    ),
    "mimic_cxr_jpg": Size(
        "8-bit grey JPEG 3056x2544, quality 95",
        "MIMIC-CXR-JPG 2.0.0 (PhysioNet): JPEG quality 95 of the full DICOM resolution, typically 2544 wide",
    ),
    "chest_imagenome": Size(
        "gold CSV (10 boxes per image), scene_graph.zip of one JSON per image (10 objects), on the MIMIC images",
        "Chest ImaGenome 1.0.0 (PhysioNet): 1,000 gold images, about 240k silver scene graphs; 2d-images.md 7",
    ),
    "aptos2019": Size(
        "RGB PNG 2416x1736",
        "Kaggle APTOS 2019 train_images: widths 474-4288, 2416x1736 one of the most common camera sizes",
    ),
    "isic2019": Size(
        "RGB JPEG 1024x1024, quality 95",
        "ISIC 2019 (BCN20000, Combalia et al. 2019): 1024x1024 dermoscopy JPEGs",
    ),
    "kvasir_v2": Size(
        "RGB JPEG 720x576, quality 95",
        "Kvasir v2 (Pogorelov et al. 2017): 720x576 up to 1920x1072",
    ),
    "rfmid": Size(
        "RGB PNG 4288x2848",
        "RFMiD (Pachade et al. 2021, Data 6:14): 4288x2848 (Kowa VX-10a), 2144x1424, 2048x1536",
    ),
    "brain_tumor_mri": Size(
        "grey JPEG 512x512",
        "Brain Tumor MRI (Kaggle, Nickparvar 2021): its figshare classes 512x512; its no-tumour class from Br35H, "
        "173x189 to 1427x1200, median 346x320 (openmedlab/Awesome-Medical-Dataset) [512 taken for all]",
    ),
    "lc25000": Size(
        "RGB JPEG 768x768",
        "LC25000 (Borkowski et al. 2019, arXiv:1912.12142): 768x768 JPEG",
    ),
    "m3d_cap": Size(
        "series of 40 windowed 8-bit PNG slices of 512x512 (an item is a slice), each with its text.txt",
        "M3D-Cap (Bai et al. 2024): Radiopaedia series as 8-bit PNG slices; 3d-volumes.md 10 [size assumed]",
    ),
    "kvasir_seg": Size(
        "RGB JPEG 720x576 and a JPEG mask of the same size",
        "Kvasir-SEG (Jha et al. 2020): 332x487 to 1920x1072; 2d-images.md 4",
    ),
    "medsegbench": Size(
        "npz at 128, 256 and 512 px (a file a flag and size, deflated): uint8 (N, S, S, 3) or (N, S, S), 0/1 masks; "
        "polypgen with categories C1-C6",
        "MedSegBench (Kus and Aydin 2024, Sci Data 11:1283): 128/256/512 variants; 2d-images.md 2",
    ),
    "pannuke": Size(
        "parquet rows of an RGB PNG 256x256 and 24 one-bit PNG instance masks",
        "PanNuke (Gamper et al. 2020): 256x256 at 40x, 189,744 nuclei on 7,901 images (24 per image); 2d-images.md 3",
    ),
    "medmnist": Size(
        "npz at 28, 64, 128 and 224 px (a file a flag and size, deflated): every flag, RGB or grey and its labels "
        "as upstream; --full-counts: DermaMNIST with its full split counts 7,007/1,003/2,005",
        "MedMNIST+ (Yang et al. 2023; Zenodo 10519652): sizes 28/64/128/224; medmnist/info.py counts",
    ),
    "medmnist3d": Size(
        "organmnist3d.npz and organmnist3d_64.npz: uint8 (N, 28, 28, 28) and (N, 64, 64, 64)",
        "MedMNIST v2 3D (Yang et al. 2023); 3d-volumes.md 9",
    ),
    "roco_qa": Size(
        "parquet rows of a grey JPEG 512x512, 100 rows per row group",
        "ROCO (Pelka et al. 2018): PMC radiology figures 160 to about 1,200 px wide (the MedIR/roco dataset "
        "viewer) [512 taken for all]",
    ),
    "pathvqa": Size(
        "parquet rows of an RGB JPEG 1024x768, 100 rows per row group",
        "PathVQA (He et al. 2020): textbook and PEIR figures, a few hundred to about 1,500 px [assumed]",
    ),
    "vqa_rad": Size(
        "parquet rows of a grey JPEG 1024x1024",
        "VQA-RAD (Lau et al. 2018, Sci Data 5:180251): MedPix radiographs, CT and MR, about 500-2,000 px",
    ),
    "medpix_clinqa": Size(
        "parquet shards of grey PNG 1024x1024 (image column image_id)",
        "MedPix case images of about 1,000 px [assumed]; 2d-images.md 8",
    ),
    "radimagenet_vqa": Size(
        "parquet rows of a grey PNG 224x224 (3 questions per image)",
        "RadImageNet (Mei et al. 2022): 224x224 images; the VQA card: 9,000 QAs on 1,000 images",
    ),
    "pmc_vqa": Size(
        "images.zip of RGB JPEG 800x600 figures (stored, as the upload's zip), test.csv",
        "PMC-VQA (Zhang et al. 2023): PubMed Central figures [size assumed]",
    ),
    "omnimedvqa": Size(
        "OmniMedVQA.zip of RGB PNG 512x512 images and their QA JSON",
        "OmniMedVQA (Hu et al. 2024): 73 datasets of mixed sizes [assumed 512 px]",
    ),
    "ct_rate": Size(
        "int16 HU .nii.gz 512x512x300 (gzip level 1, nibabel's)",
        "CT-RATE (Hamamci et al. 2024): in-plane 512-1024, 100-600 slices; 3d-volumes.md 3",
    ),
    "radgenome_chestct": Size(
        "int16 HU .nii.gz 512x512x300",
        "RadGenome-ChestCT: the CT-RATE volumes, CT-CLIP preprocessed; 3d-volumes.md 4",
    ),
    "brats_ped": Size(
        "four int16 .nii.gz sequences 240x240x155 and a uint8 seg per case",
        "BraTS 2023 (Kazerooni et al. 2023): 240x240x155, 1 mm; 3d-volumes.md 2",
    ),
    "brats_men": Size(
        "four int16 .nii.gz sequences 240x240x155 per case",
        "BraTS 2023 MEN (LaBella et al. 2023): 240x240x155; 3d-volumes.md 1",
    ),
    "hanseg": Size(
        "gzip NRRD: CT int16 1024x1024x180 at 0.558x0.558x2 mm, MR T1 int16 512x512x86 at 0.703x0.703x3 mm",
        "HaN-Seg (Podobnik et al. 2023, Med Phys; measured on the release by third-party READMEs): CT 1024x1024 "
        "in-plane in all 42 cases (case_01 1024x1024x202 at 0.558x0.558x2.0 mm), 11,194 slices in all of which "
        "3,613 MR (about 180 CT and 86 MR a case), MR 512x512 (case_01 512x512x83 at 0.703x0.703x3.0 mm); "
        "3d-volumes.md 6",
    ),
    "synthrad2023": Size(
        "brain: CT int16 and MR float32 .nii.gz 260x220x180 at 1 mm, pelvis 448x294x119 at 1x1x2.5 mm, and a "
        "uint8 mask; items alternate brain and pelvis",
        "SynthRAD2023 (Thummerer et al. 2023, Med Phys) and its preprocessing repository: brain resampled to "
        "1x1x1 mm [extent assumed], pelvis to 1x1x2.5 mm, all 180 pelvis cases 390-586 x 248-410 x 84-153 "
        "(medians 448x294x119; SynthRAD2023/preprocessing, catacc-dev/Organizing-SynthRAD-dataset); "
        "3d-volumes.md 7",
    ),
    "cirrmri600": Size(
        "float32 .nii.gz 320x260x64 (T1 and T2) and uint8 masks, plus one healthy case per sequence",
        "CirrMRI600+ (Jha et al. 2024, arXiv 2410.16296; Sci Data 2025): 628 scans (310 T1, 318 T2) of nearly "
        "40,000 slices, about 64 a volume [in-plane matrix assumed]; 3d-volumes.md 5",
    ),
    "mrnet": Size(
        "uint8 .npy (30, 256, 256) per plane",
        "MRNet (Bien et al. 2018): 256x256 slices, 17-61 per series; 3d-volumes.md 8",
    ),
    "mmdental": Size(
        "int16 CBCT .nii.gz 400x400x300 at 0.3 mm",
        "MMDental: 660 CBCTs [extent assumed from typical 0.3 mm, 12 cm CBCT fields]; 3d-volumes.md 11",
    ),
}
