# Stage 3: validate every image path of every task JSON of each built subset, then one table.


rule validate_subset:
    input:
        unpack(validation_inputs),
    output:
        "results/validation/subsets/{group}/{folder}.json",
    log:
        "logs/validate/{group}/{folder}.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, attempt: 1000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    script:
        ENTRY


rule validation_summary:
    input:
        plan=RESULTS / "plan.json",
        reports=planned_reports,
    output:
        table="results/validation/summary.txt",
        json="results/validation/summary.json",
    log:
        "logs/validation_summary.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        instructions=str(RESULTS / "not-built.md"),
    script:
        ENTRY
