"""The unit/integration split of the test suite, read from the test binary itself.

    python3 -m tmmtools.scripts.test_tags --check BINARY         every test is unit or integration, never both
    python3 -m tmmtools.scripts.test_tags --filter unit BINARY   a `swift test --filter` regex for the unit tests

BINARY is the SwiftPM test bundle (.build/debug/tmm-bridgePackageTests.xctest). Swift Testing
6.3 has no tag filter on the command line (`--filter` and `--skip` match test IDs only), so the
tags come from the bundle: its `--list-tests` run writes one JSON record per suite and test to
an event stream (ABI version 0), and with SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED set each
record carries the tags written on it (`_tags`, e.g. [".unit"]). A test's tags are its own plus
those of the suites around it, as Swift Testing applies them.

`--filter` checks first and refuses to print a filter when the split is broken, and it fails if
the listing carries no tags at all (a toolchain that renamed the field must not turn
`make test-fast` into a run of nothing). Tests/CLITests/SuiteTagTests.swift runs `--check`
inside `swift test`, so `make test` fails on a suite without its tag.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

KINDS = ("unit", "integration")


def listing(binary):
    """The suite and test records of the bundle, as dicts with id, kind and tags."""
    with tempfile.TemporaryDirectory() as directory:
        stream = os.path.join(directory, "tests.jsonl")
        environment = dict(os.environ, SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED="1")
        result = subprocess.run(
            [binary, "--testing-library", "swift-testing", "--list-tests",
             "--experimental-event-stream-output", stream, "--experimental-event-stream-version", "0"],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            sys.exit(f"test-tags: {binary} --list-tests failed ({result.returncode}): {result.stderr.strip()}")
        records = []
        with open(stream) as lines:
            for line in lines:
                record = json.loads(line)
                if record.get("kind") != "test":
                    continue
                payload = record["payload"]
                tags = payload.get("tags", payload.get("_tags", []))
                records.append({
                    "id": payload["id"],
                    "kind": payload["kind"],
                    "tags": {tag.lstrip(".") for tag in tags},
                    "where": payload.get("sourceLocation", {}).get("fileID", "?")
                             + ":" + str(payload.get("sourceLocation", {}).get("line", "?")),
                })
    if not records:
        sys.exit(f"test-tags: {binary} listed no tests")
    return records


def suite_of(test_id):
    """The suite ID a test or suite ID sits in (None at the top level).

    Suites are `Module.Type` or `Module.Outer.Inner`; tests are `<suite>/name()/File.swift:l:c`,
    or `Module/name()/...` outside any suite."""
    head = test_id.split("/", 1)[0]
    if "/" in test_id:
        return head if "." in head else None
    return head.rsplit(".", 1)[0] if head.count(".") >= 2 else None


def effective_tags(records):
    """Each record's own tags plus those of every suite around it."""
    by_id = {record["id"]: record for record in records if record["kind"] == "suite"}
    result = {}
    for record in records:
        tags = set(record["tags"])
        parent = suite_of(record["id"])
        while parent is not None:
            tags |= by_id[parent]["tags"] if parent in by_id else set()
            parent = suite_of(parent)
        result[record["id"]] = tags
    return result


def check(records):
    """Problems: tests with neither kind or both, and a listing without any tag."""
    if not any(record["tags"] for record in records):
        return ["the listing carries no tags at all (did the event stream's tag field change?)"]
    tags = effective_tags(records)
    problems = []
    for record in records:
        if record["kind"] != "function":
            continue
        kinds = sorted(kind for kind in KINDS if kind in tags[record["id"]])
        if len(kinds) != 1:
            what = "neither .unit nor .integration" if not kinds else "both .unit and .integration"
            problems.append(f"{record['where']}: {record['id']} has {what}")
    return problems


def unit_filter(records, kind):
    """A regex matching the outermost suites (or top-level tests) tagged `kind`."""
    tags = effective_tags(records)
    chosen = []
    for record in records:
        if kind not in record["tags"]:
            continue
        parent = suite_of(record["id"])
        if parent is not None and kind in tags.get(parent, set()):
            continue  # selected with the suite around it
        test_id = record["id"]
        if record["kind"] == "function":
            test_id = "/".join(test_id.split("/")[:2])  # drop the source location
        chosen.append(re.escape(test_id))
    if not chosen:
        sys.exit(f"test-tags: no test is tagged .{kind}")
    return "^(" + "|".join(sorted(chosen)) + ")$"


def main(arguments):
    if len(arguments) == 2 and arguments[0] == "--check":
        problems = check(listing(arguments[1]))
        for problem in problems:
            print("test-tags: " + problem, file=sys.stderr)
        if problems:
            print(f"test-tags: {len(problems)} test(s) break the split: give every @Suite exactly one of "
                  ".tags(.unit) or .tags(.integration) (Tests/Support/TestSupport/Tags.swift)", file=sys.stderr)
        return 1 if problems else 0
    if len(arguments) == 3 and arguments[0] == "--filter" and arguments[1] in KINDS:
        records = listing(arguments[2])
        problems = check(records)
        if problems:
            for problem in problems:
                print("test-tags: " + problem, file=sys.stderr)
            return 1
        print(unit_filter(records, arguments[1]))
        return 0
    print(__doc__.strip().splitlines()[2], file=sys.stderr)
    print(__doc__.strip().splitlines()[3], file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
