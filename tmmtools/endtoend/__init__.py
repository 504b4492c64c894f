"""The end-to-end scripts (README.md here): independent clients run against `tmm-bridge run` by
Tests/CLITests/EndToEndTests.swift and tmmtools/hwtest.py, each `python3 -m tmmtools.endtoend.<name> CONTEXT_JSON`."""
