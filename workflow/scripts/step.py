# The script behind every rule: it runs the step named by the rule (see preprocess/pipeline/snakemake_entry.py).
# Under --use-conda the environment holds the dependencies only: the package is imported from this checkout.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1]))  # noqa: F821 - injected by Snakemake

from preprocess.pipeline.snakemake_entry import run

run(snakemake)  # noqa: F821 - injected by Snakemake
