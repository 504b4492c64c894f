"""Plays a virtual receiver's timeline into a pty, in real time, as a serial receiver would.

The pty's slave side is what gpsd opens (its path is printed and, with `link`, kept as a symlink).
Writes never block: a real UART does not wait for its reader, so bytes nobody reads (gpsd killed,
device not yet opened) are dropped and counted. What is written to the receiver (gpsd's probe
strings, the bridge's RTCM corrections) is read from the pty's master whenever the driver waits,
stamped with the scenario time and fed to the receiver's corrections input (sim/corrections.py):
a `corrections` phase's fix follows it. `unplug` closes the pty (gpsd sees the device
vanish) and after its duration opens a new one, under another name, as a re-enumerated USB
device would be; with a gpsd control socket the device is also removed from and added to gpsd,
which is what udev and gpsdctl do on a real box.
"""

from __future__ import annotations

import errno
import grp
import json
import os
import pwd
import select
import signal
import socket
import termios
import time
import tty

from tmmtools.sim.receiver import Action, Note, Receiver, Write


class Pty:
    def __init__(self):
        self.master, self.slave = os.openpty()
        # Raw, no echo: gpsd writes probe strings that must not come back as input.
        tty.setraw(self.slave, termios.TCSANOW)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        # gpsd opens devices added at run time as its own user, and devpts makes ptys root-only:
        # hand it to the gpsd user and the dialout group, as udev's rules hand a receiver to
        # dialout: a bridge that dropped to nobody:dialout, and the private gpsd it runs as that
        # user, can open it too (else anyone may read).
        try:
            try:
                group = grp.getgrnam("dialout").gr_gid
            except KeyError:
                group = -1
            os.chown(self.path, pwd.getpwnam("gpsd").pw_uid, group)
            os.chmod(self.path, 0o660)
        except (KeyError, PermissionError):
            os.chmod(self.path, 0o666)

    def write(self, data: bytes) -> int:
        """Bytes written; the rest is dropped (nobody reading, buffer full)."""
        written = 0
        while written < len(data):
            try:
                written += os.write(self.master, data[written:])
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno in (errno.EIO, errno.EAGAIN):
                    break
                raise
        return written

    def close(self):
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def _gpsd_control(path: str | None, command: str) -> str:
    """One gpsd control-socket command (`+/dev/pts/3` adds, `-/dev/pts/3` removes); gpsd answers OK/ERROR."""
    if not path:
        return "no control socket"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(path)
            sock.sendall(command.encode() + b"\n")
            return sock.recv(64).decode(errors="replace").strip()
    except OSError as error:
        return f"failed: {error}"


class Driver:
    def __init__(self, scenario, seed=None, speed=1.0, out=None, timeline=None, events=None,
                 gpsd_control=None, gpsd_pid=None, link=None, received=None):
        self.receiver = Receiver(scenario, seed)
        self.received = received  # every byte written to the receiver, as read
        self.speed = speed
        self.out = out  # every byte written (or dropped), in a gpsd-format capture
        self.timeline = timeline  # JSON lines: truth per epoch, notes, actions
        self.events = events  # JSON lines on the console: plugs, actions (for a runner)
        self.gpsd_control = gpsd_control
        self.gpsd_pid = gpsd_pid
        self.link = link
        self.pty = None
        self.written = self.dropped = 0
        self.start = 0.0  # monotonic time of scenario time 0

    def _emit(self, record: dict, console: bool = False):
        line = json.dumps(record, sort_keys=True) + "\n"
        if self.timeline:
            self.timeline.write(line)
        if console and self.events:
            self.events.write(line)
            self.events.flush()

    def _control(self, command: str) -> str | None:
        """A gpsd control command (None without a control socket), reading what is written to the
        receiver meanwhile: a gpsd that may write to devices drains its writes to the pty
        (tcdrain) before it answers `+DEVICE`, so nobody reading it would hold both up."""
        if not self.gpsd_control:
            return None
        if not self.pty:
            return _gpsd_control(self.gpsd_control, command)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(3)
                sock.connect(self.gpsd_control)
                sock.sendall(command.encode() + b"\n")
                deadline = time.monotonic() + 10
                while (remaining := deadline - time.monotonic()) > 0:
                    ready, _, _ = select.select([sock, self.pty.master], [], [], remaining)
                    if self.pty.master in ready:
                        self._read_port()
                    if sock in ready:
                        return sock.recv(64).decode(errors="replace").strip()
                return "failed: timed out"
        except OSError as error:
            return f"failed: {error}"

    def _plug(self, t: float):
        self.pty = Pty()
        if self.link:
            tmp = self.link + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(self.pty.path, tmp)
            os.replace(tmp, self.link)
        answer = self._control("+" + self.pty.path)
        self._emit({"t": t, "event": "plugged", "device": self.pty.path, **({"gpsd": answer} if answer else {})}, console=True)

    def _unplug(self, t: float):
        path = self.pty.path
        answer = self._control("-" + path)
        self.pty.close()
        self.pty = None
        self._emit({"t": t, "event": "unplugged", "device": path, **({"gpsd": answer} if answer else {})}, console=True)

    def _read_port(self):
        """Everything written to the receiver since the last read, fed to its corrections input."""
        while self.pty:
            try:
                data = os.read(self.pty.master, 65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in (errno.EIO, errno.EAGAIN):
                    return
                raise
            if not data:
                return
            if self.received:
                self.received.write(data)
            self.receiver.corrections.feed(max(0.0, time.monotonic() - self.start) * self.speed, data)

    def _wait(self, deadline: float):
        """Until the monotonic `deadline`, reading what is written to the receiver meanwhile."""
        while True:
            remaining = deadline - time.monotonic()
            if not self.pty:
                if remaining > 0:
                    time.sleep(remaining)
                return
            if remaining <= 0:
                self._read_port()
                return
            ready, _, _ = select.select([self.pty.master], [], [], remaining)
            if ready:
                self._read_port()

    def run(self, stop=lambda: False) -> dict:
        """Plays the whole scenario; returns counts. `stop()` is polled between epochs."""
        self.start = time.monotonic()  # what is read while plugging is at time 0; the clock starts after
        self._plug(0.0)
        if self.out:
            s = self.receiver.scenario
            self.out.write(f"# Name: {s.name} (tmm-sim, seed {self.receiver.seed})\n".encode())
            protocol = " (UBX)" if s.receiver.protocol == "ubx" else ""
            self.out.write(f"# Receiver: {s.receiver.vendor} {s.receiver.model} {s.receiver.serial}{protocol}\n".encode())
        self.start = start = time.monotonic()
        replug_at = None
        epochs = 0
        try:
            for item in self.receiver.timeline(pace=lambda t: self._wait(start + t / self.speed)):
                if stop():
                    break
                self._wait(start + item.t / self.speed)
                if replug_at is not None and item.t >= replug_at - 1e-9:
                    self._plug(item.t)
                    replug_at = None
                if isinstance(item, Write):
                    wall = time.time()  # before the write: a fast reader may beat the line after it
                    if self.out:
                        self.out.write(item.data)
                    sent = self.pty.write(item.data) if self.pty else 0
                    self.written += sent
                    self.dropped += len(item.data) - sent
                    if item.truth is not None:
                        epochs += 1
                        self._emit({"truth": item.truth, "dropped": len(item.data) - sent, "wall": wall})
                elif isinstance(item, Action):
                    self._emit({"t": item.t, "action": item.kind, "duration": item.duration}, console=True)
                    if item.kind == "unplug" and self.pty:
                        self._unplug(item.t)
                        replug_at = item.t + item.duration
                    elif item.kind == "gpsd-kill" and self.gpsd_pid:
                        try:
                            os.kill(self.gpsd_pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                elif isinstance(item, Note):
                    self._emit({"t": item.t, "note": item.kind, **item.detail})
            if replug_at is not None:
                self._plug(replug_at)
            self._read_port()
            self._emit({"t": round((time.monotonic() - start) * self.speed, 3), "note": "received",
                        **self.receiver.corrections.counts()})
        finally:
            if self.pty:
                self._emit({"t": None, "event": "finished", "device": self.pty.path}, console=True)
            # Complete on disk before anyone is told the scenario is over.
            for handle in (self.timeline, self.out, self.received):
                if handle:
                    handle.flush()
        return {"epochs": epochs, "written": self.written, "dropped": self.dropped,
                "received": self.receiver.corrections.counts()}

    def close(self):
        if self.pty:
            self.pty.close()
            self.pty = None
        if self.link and os.path.islink(self.link):
            os.unlink(self.link)
