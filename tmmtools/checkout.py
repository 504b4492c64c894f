"""Where the checkout is, and how one tool of this package starts another.

Every tool is a module run from the repository root as `/usr/bin/python3 -m tmmtools.<module>`
(tmmtools/README.md). A tool that starts another one as a child process builds its command line
with `module_command`: the child gets PYTHONPATH set to the checkout, so it imports `tmmtools`
whatever its working directory. The Swift tests start the tools the same way
(Tests/Support/TestSupport/PythonTools.swift).
"""

import os
import sys

# The repository root: the folder holding tmmtools/.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def path(*parts: str) -> str:
    """A path inside the checkout: path("hwtests", "scenarios") is ROOT/hwtests/scenarios."""
    return os.path.join(ROOT, *parts)


def module_command(module: str, *arguments: str, python: str = "") -> list:
    """The command line that runs `tmmtools.<module>` (or a full dotted name) with `arguments`:
    `/usr/bin/env PYTHONPATH=<checkout> <python> -B -m <module> ...`, `python` defaulting to this
    interpreter (Debian's /usr/bin/python3, whose python3-websockets and python3-gps the tools
    need). -B: no __pycache__ written into the checkout."""
    name = module if module.startswith("tmmtools.") else "tmmtools." + module
    return ["/usr/bin/env", "PYTHONPATH=" + ROOT, python or sys.executable, "-B", "-m", name, *arguments]
