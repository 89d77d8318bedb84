"""viewstore's benchmarks: ``python -m benchmarks`` (see README.md in this folder)."""
