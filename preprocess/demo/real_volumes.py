"""Real-size fakes of the volume downloads (CT-RATE, RadGenome, BraTS, HaN-Seg, SynthRAD, CirrMRI600+, MRNet,
MMDental); demo/real.py writes them."""

from __future__ import annotations

import numpy as np

from preprocess.demo import fields

# --- volumes --------------------------------------------------------------------------------------------------

CT_SHAPE = (512, 512, 300)
LPS_CT = np.diag([-0.7, -0.7, 1.5, 1.0])


BRATS = (240, 240, 155)
BRATS_LPS = np.diag([-1.0, -1.0, 1.0, 1.0])


def _mr(shape, seed: int, dtype=np.int16) -> np.ndarray:
    return fields.mr_slices(shape, seed).astype(dtype)
