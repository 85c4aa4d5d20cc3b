"""A small Chrome DevTools Protocol client driving Debian's headless ``chromium`` for real.

Opens a file in a fresh profile, records console messages, uncaught exceptions, log errors and
every network request, evaluates JavaScript in the loaded page and takes full-page screenshots.
Used by the browser tests and by ``ops/checks/screenshot_reports.py``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = "/usr/bin/chromium"
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
)


class Browser:
    """``with Browser() as b: page = b.open(path)`` — one chromium process, stopped on exit."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="modebench-chromium-")
        self.process: subprocess.Popen[bytes] | None = None
        self.socket: ClientConnection | None = None
        self._stack = contextlib.ExitStack()
        self._next = 0

    def __enter__(self) -> Browser:
        self.process = subprocess.Popen(
            [CHROMIUM, *_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.socket = self._stack.enter_context(
            connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=30)
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             events: list[dict[str, Any]] | None = None, timeout: float = 60) -> dict[str, Any]:  # fmt: skip
        """Send one command and wait for its reply; events arriving meanwhile go to ``events``."""
        assert self.socket is not None
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            if events is not None and "method" in reply:
                events.append(reply)

    def wait_for(self, name: str, events: list[dict[str, Any]], timeout: float = 60) -> None:
        assert self.socket is not None
        deadline = time.monotonic() + timeout
        while not any(e["method"] == name for e in events):
            reply = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if "method" in reply:
                events.append(reply)

    def open(self, path: str | os.PathLike[str]) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session, events=events)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session, events)  # fmt: skip
        events.clear()  # only what the page itself does counts
        url = Path(path).resolve().as_uri()
        self.send("Page.navigate", {"url": url}, session, events)
        self.wait_for("Page.loadEventFired", events)
        # Let anything deferred (there should be nothing) run and report.
        self.send("Runtime.evaluate", {"expression": "new Promise(r => setTimeout(r, 200))", "awaitPromise": True},
                  session, events)  # fmt: skip
        return Page(self, session, url, events)


class Page:
    def __init__(self, browser: Browser, session: str, url: str, events: list[dict[str, Any]]) -> None:
        self.browser, self.session, self.url, self.events = browser, session, url, events

    def evaluate(self, expression: str) -> Any:
        result = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                   self.session, self.events)  # fmt: skip
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
                found.append(json.dumps(params.get("args")))
            elif method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                found.append(json.dumps(params["entry"]))
        return found

    def requests(self) -> list[str]:
        """Every URL the page requested besides the document itself."""
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent" and e["params"]["request"]["url"] != self.url
        ]

    def screenshot(self, output: str | os.PathLike[str]) -> None:
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        self.browser.send("Emulation.setDeviceMetricsOverride",
                          {"width": 1200, "height": min(height, 16000), "deviceScaleFactor": 1, "mobile": False},
                          self.session, self.events)  # fmt: skip
        shot = self.browser.send("Page.captureScreenshot", {"format": "png"}, self.session, self.events)
        Path(output).write_bytes(base64.b64decode(shot["data"]))
