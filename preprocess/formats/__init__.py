"""Reading and writing files: PNG, npz, DICOM, CSV, parquet, archives, manifests and tables; safe
file operations (atomic writes, regular files only) and the raw root's boundary."""
