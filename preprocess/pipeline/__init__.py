"""The steps as a run takes them (one Build object), the Snakemake entry, the run-wide view,
estimates and the evaluation's config."""
