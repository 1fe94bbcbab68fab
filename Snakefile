# MedHEB-Bench: raw upstream downloads -> the canonical DATA_BASEDIR tree, validated.
# Stages: check each raw source -> plan what can be built -> convert -> validate every task JSON.


from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "preprocess/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/check.smk"
include: "workflow/rules/convert.smk"
include: "workflow/rules/validate.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        "results/validation/summary.txt",
        "results/validation/summary.html",
        "results/check/sources.html",
        expand("results/eval-config/{group}.yaml", group=GROUPS),
        planned_contact_sheets,


onsuccess:
    print_summary()


onerror:
    print_failure_hint()
