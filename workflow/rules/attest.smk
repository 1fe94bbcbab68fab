# Stage 4: the pixel fingerprints of every image the built task files name (preprocess/verify/attest.py): one file
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
    threads: declared_threads("attest_subset")
    resources:
        mem_mb=declared_mem_mb("attest_subset"),
        runtime=declared_runtime("attest_subset"),
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
