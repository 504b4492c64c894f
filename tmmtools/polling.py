"""Waiting for a condition instead of for time: the one polling loop of the Python tools.

A tool that needs something to have happened (a port to answer, a log line, a registration, a
report) polls for it with a deadline, so it goes on as soon as the condition holds. The Swift
tests have the same helper (Tests/Support/TestSupport/Waiting.swift, waitUntil).
"""

import time


class TimedOut(Exception):
    """A condition did not hold within its time; the message names what was awaited."""


def wait_until(condition, seconds: float = 5.0, interval: float = 0.02, *, what: str = "", error=TimedOut):
    """Polls `condition` until it returns something truthy or `seconds` pass; returns its last
    value (checked once more at the deadline, so a slow machine gets the whole time).

    With `what`, a time-out raises `error` (TimedOut unless given: the harness passes its
    BenchError) saying "timed out after N s waiting for <what>" instead of returning the falsy
    value."""
    end = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            if what:
                raise error(f"timed out after {seconds:g} s waiting for {what}")
            return value
        time.sleep(interval)
