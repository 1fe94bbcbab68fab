"""Before a build: which selected subsets are built, validated, taken from the release or skipped, and why
(buildable)."""
