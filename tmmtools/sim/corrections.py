"""The virtual receiver's corrections input: what is written to its port (its pty), and the RTK
fix that follows it in a `quality = "corrections"` phase (hwtests/README.md, "Corrections").

`Corrections.feed(t, data)` takes the bytes written to the receiver at scenario time `t` (gpsd's
probe strings, the bridge's RTCM): tmmtools.peers.rtcm.Reader splits and validates them (the CRC-24Q
of the Python tools), and every valid frame is a correction at `t`. `quality(t)` is the fix a
real RTK rover would have then, with these limits (a phase's keys, seconds):

- `float-after` (3): valid corrections for this long (no gap over `age-limit`) give RTK float;
- `fixed-after` (5): this much longer in float with corrections gives RTK fixed;
- `age-limit` (20): with no valid frame for this long, a fixed rover falls back to float (it
  keeps its fix while the age is under the limit: real receivers hold RTK for 10-60 s of
  correction age; a ZED-F9P's default DGNSS timeout is 60 s);
- `autonomous-after` (40): this much longer without corrections, float becomes autonomous.

When corrections come back, a rover in float goes fixed after `fixed-after`, an autonomous one
starts over at `float-after`. `age(t)` is the seconds since the last valid frame (the GGA's age of
differential data), `station` the 12-bit id of the last 1005/1006 (0 before one).

Pure: times are the caller's (the driver's scenario clock, a test's fake one).
"""

from __future__ import annotations

from dataclasses import dataclass

from tmmtools.peers.rtcm import Reader


@dataclass(frozen=True)
class Limits:
    float_after: float = 3.0
    fixed_after: float = 5.0
    age_limit: float = 20.0
    autonomous_after: float = 40.0


class Model:
    """The fix as a function of when valid corrections arrived (see the module's docstring)."""

    def __init__(self, limits: Limits = Limits()):
        self.limits = limits
        self.state = "autonomous"
        self.last: float | None = None  # the latest valid correction
        self.stream_start: float | None = None  # the first correction of the current unbroken stream
        self.float_since: float | None = None

    def frame(self, t: float):
        """A valid correction arrived at `t`."""
        self._advance(t)
        if self.last is None or t - self.last > self.limits.age_limit:
            self.stream_start = t
        self.last = t

    def quality(self, t: float) -> str:
        self._advance(t)
        return self.state

    def age(self, t: float) -> float | None:
        return None if self.last is None else max(0.0, t - self.last)

    def _advance(self, t: float):
        limits = self.limits
        if self.last is None:
            return
        if t - self.last <= limits.age_limit:
            if self.state == "autonomous" and t - self.stream_start >= limits.float_after:
                self.state, self.float_since = "float", self.stream_start + limits.float_after
            if self.state == "float" and t - max(self.float_since, self.stream_start) >= limits.fixed_after:
                self.state = "fixed"
            return
        if self.state == "fixed":
            self.state, self.float_since = "float", self.last + limits.age_limit
        if self.state == "float" and t - self.last > limits.age_limit + limits.autonomous_after:
            self.state = "autonomous"


class Corrections:
    """The receiver's corrections port: a Reader for the bytes, a Model for the fix."""

    def __init__(self, limits: Limits = Limits()):
        self.reader = Reader()
        self.model = Model(limits)

    def configure(self, limits: Limits):
        """A new phase's limits; what was received stays."""
        self.model.limits = limits

    def feed(self, t: float, data: bytes):
        for _ in self.reader.feed(data):
            self.model.frame(t)

    def quality(self, t: float) -> str:
        return self.model.quality(t)

    def age(self, t: float) -> float | None:
        return self.model.age(t)

    @property
    def station(self) -> int:
        return self.reader.station_id or 0

    def counts(self) -> dict:
        return self.reader.counts()
