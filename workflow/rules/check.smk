# Stage 1: check each raw download, then decide which subsets can be built.


rule check_source:
    output:
        str(RESULTS / layout.CHECK_REPORT),
    log:
        "logs/check/{source}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: source_check_threads
    resources:
        mem_mb=declared_mem_mb("check_source"),
        runtime=declared_runtime("check_source"),
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
    threads: declared_threads("plan")
    resources:
        mem_mb=declared_mem_mb("plan"),
        runtime=declared_runtime("plan"),
    params:
        selection=[subset.key for subset in SELECTED],
    script:
        ENTRY
