"""The demo's MIMIC-CXR-JPG images, as (group folder, patient, study, dicom id): the raw tree (sources.py) holds
them, and the Chest ImaGenome annotations (annotations.py) point at them."""

MIMIC_IMAGES = [
    ("p10", "p10000032", "s50414267", "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014"),
    ("p10", "p10000032", "s53189527", "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab"),
    ("p11", "p11000011", "s51029426", "1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21"),
]
