"""The package's own unit tests (tmm-sim and the harness's checks): python3 -m tmmtools.tests."""
