# Stage 4: the pixel fingerprints of every image the built task files name (preprocess/checks/attest.py): one file
# per subset once it is validated, then the tree's file from them; the report's first page shows its digests.


rule attest_subset:
    input:
        str(RESULTS / layout.SUBSET_REPORT),
    output:
        str(RESULTS / layout.SUBSET_FINGERPRINTS),
    log:
        "logs/attest/{group}/{folder}.log",
    conda:
        "../envs/preprocess.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 1000 * attempt,
        runtime=lambda wildcards, attempt: 240 * attempt,
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
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    script:
        ENTRY
