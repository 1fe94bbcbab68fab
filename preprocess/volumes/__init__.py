"""3D volumes: readers (NIfTI, NRRD, npy), pure transforms, and per-dataset slicing recipes."""
