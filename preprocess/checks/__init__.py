"""Looking before and after a build: the raw downloads (check, register, download), what can be
built (plan), and the built tree (validate, attest)."""
