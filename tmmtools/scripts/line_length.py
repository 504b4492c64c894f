"""The Swift line-length rule: no line over 120 characters (or --limit LIMIT).

    python3 -m tmmtools.scripts.line_length [--limit LIMIT] PATH ...

Walks each PATH (a .swift file, or a directory searched recursively for *.swift) and prints
`file:line: N characters (limit 120)` for every longer line, then fails. Characters are counted,
not bytes (a line of `°` or `é` is as long as it looks). swift-format keeps code within its
120 columns but never breaks a string literal, so a long message or fixture line passes
`swift format lint`; this is the check that catches it (`make check-format`). Split such a
literal with `+`, or write it as a multi-line literal with `\\` line continuations.
"""
import argparse
import os
import sys

LIMIT = 120


def swift_files(paths):
    """The .swift files the paths name or hold, each directory's in sorted order."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for directory, subdirectories, files in os.walk(path):
                subdirectories.sort()
                found.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".swift"))
        elif os.path.isfile(path):
            found.append(path)
        else:
            sys.exit(f"line-length: {path}: no such file or directory")
    return found


def long_lines(path, limit):
    """(line number, length) of each line of the file longer than limit characters."""
    with open(path, encoding="utf-8", newline="") as file:
        text = file.read()
    lines = (line.removesuffix("\r") for line in text.split("\n"))  # Swift's line breaks, not Unicode's
    return [(number, len(line)) for number, line in enumerate(lines, 1) if len(line) > limit]


def main():
    parser = argparse.ArgumentParser(description="Fail on Swift lines over the limit (characters).")
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("paths", nargs="+")
    arguments = parser.parse_args()
    count = 0
    for path in swift_files(arguments.paths):
        for number, length in long_lines(path, arguments.limit):
            print(f"{path}:{number}: {length} characters (limit {arguments.limit})")
            count += 1
    if count:
        print(f"line-length: {count} line(s) over {arguments.limit} characters", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
