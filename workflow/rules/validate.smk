# Stage 3: validate every image path of every task JSON of each built subset: shards that each check a slice
# of a subset's paths, cut as its conversions are (preprocess/sizing/verifyjobs.py), then the subset's report
# from their answers; then one table and the report's front page (always written), then the run's verdict
# (fails when a path does not resolve).


rule validate_shard:
    input:
        unpack(validation_inputs),
    output:
        str(RESULTS / layout.VALIDATE_SHARD),
    log:
        "logs/validate/{group}/{folder}/{shard}-of-{shards}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: lambda wildcards: stage_resources("validate", wildcards=wildcards).threads
    resources:
        mem_mb=lambda wildcards, attempt: stage_resources(
            "validate", attempt, wildcards
        ).mem_mb,
        runtime=lambda wildcards, attempt: stage_resources(
            "validate", attempt, wildcards
        ).runtime,
    script:
        ENTRY


rule validate_subset:
    input:
        unpack(validation_merge_inputs),
    output:
        str(RESULTS / layout.SUBSET_REPORT),
    log:
        "logs/validate/{group}/{folder}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: lambda wildcards: stage_resources("validate", wildcards=wildcards).threads
    resources:
        mem_mb=lambda wildcards, attempt: stage_resources(
            "validate", attempt, wildcards
        ).mem_mb,
        runtime=lambda wildcards, attempt: stage_resources(
            "validate", attempt, wildcards
        ).runtime,
    script:
        ENTRY


rule validation_summary:
    input:
        plan=RESULTS / layout.PLAN,
        reports=planned_reports,
        fingerprints=str(RESULTS / layout.FINGERPRINTS),
    output:
        table=str(RESULTS / layout.SUMMARY_TEXT),
        json=str(RESULTS / layout.SUMMARY),
        tsv=report(
            "results/validation/summary.tsv",
            caption="../report/validation.rst",
            category="2. Validation",
        ),
        page=report(
            "results/validation/summary.html",
            caption="../report/validation.rst",
            category="2. Validation",
        ),
        dashboard=report(
            "results/report/dashboard.html",
            caption="../report/dashboard.rst",
            category="2. Validation",
        ),
        compared=report(
            "results/report/compared.html",
            caption="../report/compared.rst",
            category="2. Validation",
        ),
        front="results/report/front.html",
    log:
        "logs/validation_summary.log",
    conda:
        "../envs/preprocess.yaml"
    threads: declared_threads("validation_summary")
    resources:
        mem_mb=declared_mem_mb("validation_summary"),
        runtime=declared_runtime("validation_summary"),
    params:
        instructions=str(RESULTS / layout.NOT_BUILT),
    script:
        ENTRY


rule validation_passed:
    input:
        str(RESULTS / layout.SUMMARY),
    output:
        str(RESULTS / layout.PASSED),
    log:
        "logs/validation_passed.log",
    conda:
        "../envs/preprocess.yaml"
    threads: declared_threads("validation_passed")
    resources:
        mem_mb=declared_mem_mb("validation_passed"),
        runtime=declared_runtime("validation_passed"),
    script:
        ENTRY


rule contact_sheet:
    input:
        manifests=lambda wildcards: conversion_manifests(subset_of(wildcards)),
    output:
        report(
            str(RESULTS / layout.CONTACT_SHEET),
            caption="../report/contact.rst",
            category="3. Contact sheets",
            subcategory="{group}",
        ),
    log:
        "logs/contact/{group}/{folder}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: declared_threads("contact_sheet")
    resources:
        mem_mb=declared_mem_mb("contact_sheet"),
        runtime=declared_runtime("contact_sheet"),
    script:
        ENTRY


rule eval_config:
    input:
        str(RESULTS / layout.SUMMARY),
        str(RESULTS / layout.PASSED),
    output:
        expand(str(RESULTS / layout.EVAL_CONFIG), group=GROUPS),
    log:
        "logs/eval_config.log",
    conda:
        "../envs/preprocess.yaml"
    threads: declared_threads("eval_config")
    resources:
        mem_mb=declared_mem_mb("eval_config"),
        runtime=declared_runtime("eval_config"),
    script:
        ENTRY
