"""No function in tmmtools/ is longer than 80 lines (issue 22): a longer one is split into named
pieces, each check or step a function whose name says what it does.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import ast
import pathlib
import unittest

from tmmtools import checkout

LIMIT = 80


def long_functions(limit=LIMIT):
    """(path, line, name, lines) of every function or method in tmmtools/ over `limit` lines,
    decorators not counted."""
    root = pathlib.Path(checkout.path("tmmtools"))
    found = []
    for source in sorted(root.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append((str(source.relative_to(checkout.ROOT)), node.lineno, node.name, lines))
    return found


class FunctionLength(unittest.TestCase):
    maxDiff = None

    def test_no_function_is_over_80_lines(self):
        self.assertEqual([f"{path}:{line} {name}: {lines} lines" for path, line, name, lines in long_functions()], [])


if __name__ == "__main__":
    unittest.main()
