"""Runs the package's unit tests: `/usr/bin/python3 -m tmmtools.tests [-v] [-k PATTERN]` from the
repository root (unittest's options after the module name). tmmtools/hwtest.py runs the same
tests first, as its "tmm-sim self-test" scenario."""

import sys
import unittest

from tmmtools import checkout

unittest.main(module=None, argv=[f"{sys.executable} -m tmmtools.tests", "discover", "-s", checkout.path("tmmtools", "tests"),
                                 "-t", checkout.ROOT, *sys.argv[1:]])
