"""What the benchmark is, as data: sources, subsets and kinds (the YAML files here and their
loader), the user's settings, where every output goes, the splits, and the release's own records."""
