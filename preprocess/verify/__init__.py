"""After a build: every path the benchmark reads checked (validate), and the tree's pixel fingerprints (attest,
with its hashing, file format and comparison)."""
