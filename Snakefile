# MedHEB-Bench: raw upstream downloads -> the canonical DATA_BASEDIR tree, validated.
# Stages: check each raw source -> plan what can be built -> convert -> validate every task JSON -> attest.


from snakemake.utils import min_version

from preprocess.errors import ConfigError, stop_workflow
from preprocess.pipeline.workflow import check_config

min_version("9.0")


# The shipped config.yaml (the demo) is read only when no --configfile is given: a user's config replaces it
# rather than being merged over it, so none of the demo's keys (shards, demo, registry_overrides) leak in.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


# Checked against workflow/schemas/config.schema.yaml (the package's schema, which the CLI reads too) without
# filling in defaults (the config the summary records is the one the user wrote), by the CLI's checker: one
# line per wrong key (a misspelt one with the key it is close to), where Snakemake's validate() prints the whole
# schema.
try:
    check_config(dict(config))
except ConfigError as exc:
    stop_workflow(exc)


include: "workflow/rules/common.smk"
include: "workflow/rules/check.smk"
include: "workflow/rules/convert.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/attest.smk"


# Seconds-long steps over the run's own results run where Snakemake runs, never as cluster jobs.
localrules:
    plan,
    validation_summary,
    validation_passed,
    fingerprints,
    eval_config,
    contact_sheet,


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        str(RESULTS / layout.SUMMARY_TEXT),
        "results/validation/summary.html",
        str(RESULTS / layout.PASSED),
        str(RESULTS / layout.FINGERPRINTS),
        "results/check/sources.html",
        expand(str(RESULTS / layout.EVAL_CONFIG), group=GROUPS),
        planned_contact_sheets,


onsuccess:
    print_summary()


onerror:
    print_failure_hint(log)
