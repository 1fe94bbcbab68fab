"""Images stored inside other files: parquet columns (Hugging Face datasets) and zip archives."""
