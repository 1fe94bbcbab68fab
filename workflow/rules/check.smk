# Stage 1: check each raw download, then decide which subsets can be built.


rule check_source:
    output:
        str(RESULTS / layout.CHECK_REPORT),
    log:
        "logs/check/{source}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, attempt: 1000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    params:
        fingerprint=source_fingerprint,
    script:
        ENTRY


checkpoint plan:
    input:
        [check_report(s) for s in CHECKED_SOURCES],
    output:
        plan=RESULTS / layout.PLAN,
        instructions=RESULTS / layout.NOT_BUILT,
        table=report(
            "results/check/sources.tsv",
            caption="../report/sources.rst",
            category="1. Raw downloads",
        ),
        page=report(
            "results/check/sources.html",
            caption="../report/sources.rst",
            category="1. Raw downloads",
        ),
    log:
        "logs/plan.log",
    conda:
        "../envs/preprocess.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        selection=[subset.key for subset in SELECTED],
    script:
        ENTRY
