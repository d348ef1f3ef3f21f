"""A headless Chromium driven over the DevTools protocol, for the HTML report's tests.

The browser talks over a pipe (``--remote-debugging-pipe``: it reads commands from its
file descriptor 3 and writes replies to 4, each message JSON ended by a NUL byte), so
no websocket library and no driver program are needed: only a Chromium binary. The page
runs in a fresh profile; what it logs (console errors, uncaught exceptions, policy
violations) is kept in :attr:`Page.problems`.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["find_chromium", "Chromium", "Page"]

#: binaries tried in order; SPARSROOF_CHROMIUM names another
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
         "chrome", "chrome-headless-shell")


def find_chromium() -> str | None:
    """The Chromium binary to use, or None when none is installed."""
    named = os.environ.get("SPARSROOF_CHROMIUM")
    if named:
        return shutil.which(named) or (named if Path(named).is_file() else None)
    return next((found for name in NAMES if (found := shutil.which(name))), None)


class Chromium:
    """One headless browser process; use as a context manager."""

    def __init__(self, binary: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._next = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []
        to_browser, self._to = os.pipe()
        self._from, from_browser = os.pipe()

        def pipes_at_3_and_4() -> None:  # runs in the child before exec
            a = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--mute-audio",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=pipes_at_3_and_4)
        os.close(to_browser)
        os.close(from_browser)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError, RuntimeError, TimeoutError):
                self.send("Browser.close")
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._to, self._from):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from], [], [], left)
            if ready:
                chunk = os.read(self._from, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed its pipe")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its reply; events met meanwhile are kept."""
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str | None = None) -> dict[str, Any]:
        """The first event ``method`` (kept or still to come)."""
        deadline = time.monotonic() + self.timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            self.events.append(self._read(deadline))

    def open(self, url: str, width: int = 1280, height: int = 900) -> Page:
        """A new tab at ``url`` with a ``width`` x ``height`` window, once it has loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)


class Page:
    """A tab of :class:`Chromium`."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (an exception fails)."""
        result = self.browser.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    @property
    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and logged errors so far."""
        self.evaluate("0")  # let pending events arrive
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            params = event.get("params", {})
            method = event.get("method")
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                                "warning"):
                found.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                     for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error",
                                                                              "warning"):
                found.append("log: " + params["entry"].get("text", ""))
        return found

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        """A PNG of the window (or of the whole page)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.browser.send("Page.getLayoutMetrics", session=self.session)
            content = size["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": content["width"],
                              "height": content["height"], "scale": 1}
        shot = self.browser.send("Page.captureScreenshot", params, session=self.session)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
