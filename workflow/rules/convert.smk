# Stage 2: build one conversion shard of one subset; its manifest is the job's only output. Its inputs: the
# checks of its raw sources and, for a record-driven conversion, the release files that name its outputs.


rule convert:
    input:
        checks=subset_check_reports,
        release=release_files,
    output:
        str(RESULTS / layout.SHARD_MANIFEST),
    log:
        "logs/convert/{group}/{folder}/{conversion}.{shard}-of-{shards}.log",
    benchmark:
        "results/benchmarks/convert/{group}/{folder}/{conversion}.{shard}-of-{shards}.tsv"
    group:
        conversion_group
    conda:
        "../envs/preprocess.yaml"
    threads: lambda wildcards: conversion_resources(wildcards)[0]
    resources:
        mem_mb=lambda wildcards, attempt: conversion_resources(wildcards, attempt)[1],
        runtime=lambda wildcards, attempt: conversion_resources(wildcards, attempt)[2],
    script:
        ENTRY
