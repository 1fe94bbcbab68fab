# Stage 4: the pixel fingerprints of every image the built task files name (preprocess/verify/attest.py): once a
# subset is built, beside its validation (a path that does not resolve is fingerprinted as missing, and the
# validation reports it), shards that each fingerprint a slice of its images, cut as its conversions are
# (preprocess/sizing/verifyjobs.py), merged into one file per subset, then the tree's file from them; the
# report's first page shows its digests.


rule attest_shard:
    input:
        unpack(validation_inputs),
    output:
        str(RESULTS / layout.ATTEST_SHARD),
    log:
        "logs/attest/{group}/{folder}/{shard}-of-{shards}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: lambda wildcards: stage_resources("attest", wildcards=wildcards).threads
    resources:
        mem_mb=lambda wildcards, attempt: stage_resources(
            "attest", attempt, wildcards
        ).mem_mb,
        runtime=lambda wildcards, attempt: stage_resources(
            "attest", attempt, wildcards
        ).runtime,
    script:
        ENTRY


rule attest_subset:
    input:
        stage_shards(layout.ATTEST_SHARD, "attest"),
    output:
        str(RESULTS / layout.SUBSET_FINGERPRINTS),
    log:
        "logs/attest/{group}/{folder}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: lambda wildcards: stage_resources("attest", wildcards=wildcards).threads
    resources:
        mem_mb=lambda wildcards, attempt: stage_resources(
            "attest", attempt, wildcards
        ).mem_mb,
        runtime=lambda wildcards, attempt: stage_resources(
            "attest", attempt, wildcards
        ).runtime,
    script:
        ENTRY


rule fingerprints:
    input:
        fingerprints=planned_fingerprints,
    output:
        str(RESULTS / layout.FINGERPRINTS),
    log:
        "logs/fingerprints.log",
    conda:
        "../envs/preprocess.yaml"
    threads: declared_threads("fingerprints")
    resources:
        mem_mb=declared_mem_mb("fingerprints"),
        runtime=declared_runtime("fingerprints"),
    script:
        ENTRY
