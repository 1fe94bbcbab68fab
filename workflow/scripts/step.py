# The script behind every rule: it runs the step named by the rule (see preprocess/snakemake_entry.py).
from preprocess.snakemake_entry import run

run(snakemake)  # noqa: F821 - injected by Snakemake
