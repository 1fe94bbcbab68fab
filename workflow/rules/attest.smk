# Stage 4: the pixel fingerprints of every image the built task files name (preprocess/attest.py), once
# every built subset is validated; the report's first page shows their digests.


rule attest:
    input:
        reports=planned_reports,
    output:
        str(RESULTS / layout.FINGERPRINTS),
    log:
        "logs/attest.log",
    conda:
        "../../environment.yml"
    threads: 8
    resources:
        mem_mb=lambda wildcards, attempt: 1000 * attempt,
        runtime=lambda wildcards, attempt: 240 * attempt,
    script:
        ENTRY
