"""The application layer: every use case the command line (preprocess/cli/) and the workflow (Snakefile,
workflow/rules/*.smk through workflow.py, the rules' steps through snakemake_entry.py) call."""
