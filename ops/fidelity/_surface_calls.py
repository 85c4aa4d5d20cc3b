"""Replay a list of calls in whichever interpreter runs this file; print one JSON line per call.

Used by ``ops/fidelity/surface_vs_040.py`` under both this checkout's interpreter and a ModeBench 0.4.0
one. Input (stdin): a JSON list of ``{"id", "module", "function", "args", "kwargs"}``; arguments
tagged ``{"$tuple": [...]}``, ``{"$set": [...]}`` and ``{"$pairs": [[key, value], ...]}`` become
tuples, sets and mappings with non-string keys. Output: ``{"id", "value"}`` with the result in a
comparable JSON form, or ``{"id", "error": [type name, message]}``. Nothing here knows which
ModeBench it talks to. Two pseudo-modules: ``$attribute`` (``args`` = module, name) reports what a
caller can observe of a name without calling it, and ``$scenario`` runs one of the fault-injection
scenarios below (0.4.0's tests replace names at call time; each scenario does the same).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import re
import sys
from collections.abc import Mapping
from typing import Any


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"$tuple"}:
            return tuple(decode(item) for item in value["$tuple"])
        if set(value) == {"$set"}:
            return {decode(item) for item in value["$set"]}
        if set(value) == {"$pairs"}:  # a mapping with keys JSON cannot carry (ints, tuples)
            return {decode(key): decode(item) for key, item in value["$pairs"]}
        return {key: decode(item) for key, item in value.items()}
    return value


def encode(value: Any) -> Any:
    """A JSON form that keeps the distinctions callers can observe (type of container, order)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"$float": repr(value)}
    if isinstance(value, tuple):
        return {"$tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted(json.dumps(encode(item), sort_keys=True) for item in value)}
    if isinstance(value, enum.Enum):
        return {"$enum": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"$dataclass": type(value).__name__, "fields": fields}
    if isinstance(value, Mapping):
        return {"$dict": [[encode(key), encode(item)] for key, item in value.items()]}
    if callable(value):
        return {"$callable": getattr(value, "__name__", type(value).__name__)}
    # Fractions, Decimals and the like: their repr carries the value (addresses dropped).
    return {"$repr": re.sub(r" at 0x[0-9a-f]+", "", repr(value))}


# --- facts about names (value types, classes, parameter lists) ----------------------------------


def attribute_fact(module: str, name: str) -> Any:
    """What a caller can observe of a name without calling it: its value (type of container
    included), or for a class its kind and keys, or for a function its parameters."""
    value = getattr(importlib.import_module(module), name)
    if isinstance(value, type):
        keys = sorted(getattr(value, "__required_keys__", ())) if hasattr(value, "__total__") else None
        return {
            "$class": value.__name__,
            "typeddict_keys": keys,
            "bases": [b.__name__ for b in value.__bases__],
        }
    if callable(value):
        parameters = inspect.signature(value).parameters.values()
        return {"$parameters": [[p.name, p.kind.name, repr(p.default)] for p in parameters]}
    return {"$type": type(value).__name__, "value": encode(value)}  # a set is no frozenset either


# --- fault-injection scenarios over 0.4.0's names ------------------------------------------------
# Each replaces names the way 0.4.0's own tests do (and puts them back), then reports what a caller
# sees. Nothing here knows which ModeBench it runs against.


class _Patched:
    """``setattr`` for the duration of a ``with`` block (a tiny ``monkeypatch``)."""

    def __init__(self, target: Any, name: str, value: Any) -> None:
        self.target, self.name, self.value = target, name, value

    def __enter__(self) -> None:
        self.saved = self.target.__dict__.get(self.name, _Patched)
        setattr(self.target, self.name, self.value)

    def __exit__(self, *exc: object) -> None:
        if self.saved is _Patched:
            delattr(self.target, self.name)
        else:
            setattr(self.target, self.name, self.saved)


def _resolve(dotted: str) -> tuple[Any, str]:
    path, name = dotted.rsplit(".", 1)
    parts = path.split(".")
    target: Any = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], 2):
        try:
            target = getattr(target, part)
        except AttributeError:
            target = importlib.import_module(".".join(parts[:index]))
    return target, name


def scenario_bad_worker(code: str, seconds: float, request: dict[str, Any]) -> Any:
    from modebench.worker_process import BoundedWorker

    with BoundedWorker(timeout_seconds=seconds) as worker:
        with _Patched(worker, "worker_command", lambda: [sys.executable, "-I", "-c", code]):
            reply = worker.request(request)
        return [reply["status"], worker._process is None]


def scenario_oversized(request: dict[str, Any]) -> Any:
    from modebench.worker_process import BoundedWorker

    with BoundedWorker() as worker:
        return [worker.request(request)["status"], worker._process is None]


def scenario_cannot_start(request: dict[str, Any]) -> Any:
    from modebench import worker_process

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("spawn unavailable")

    with _Patched(worker_process.subprocess, "Popen", refuse):
        with worker_process.BoundedWorker() as worker:
            return worker.request(request)["status"]


def scenario_interrupted(request: dict[str, Any]) -> Any:
    from modebench import worker_process

    worker = worker_process.BoundedWorker()
    process = worker._start()

    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    raised = False
    with _Patched(worker_process.selectors.EpollSelector, "select", interrupt):
        try:
            worker.request(request)
        except KeyboardInterrupt:
            raised = True
    return [raised, worker._process is None, process.wait(5) is not None]


def scenario_handle_raises(error: str, request: dict[str, Any]) -> Any:
    from modebench import verifier_worker

    def fail(_request: Any) -> Any:
        raise {"RuntimeError": RuntimeError, "TimeoutError": TimeoutError, "MemoryError": MemoryError}[
            error
        ]()

    with _Patched(verifier_worker, "handle", fail):
        return verifier_worker.guarded_handle(request)["status"]


def scenario_backend_raises(target: str, request: dict[str, Any]) -> Any:
    from modebench.verifier_worker import guarded_handle

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected backend defect")

    before = guarded_handle(request)["status"]
    holder, name = _resolve(target)
    with _Patched(holder, name, broken):
        return [before, guarded_handle(request)["status"]]


def scenario_shared_worker(code: str, seconds: float, response: str, reference: Any) -> Any:
    """Re:Max's boundary test: the shared worker replaced, grading through ``api.grade``."""
    from modebench import api, verifier
    from modebench.worker_process import BoundedWorker

    task = api.Task(id="one", level=1, domain="countdown", problem="", answer=reference)
    worker = BoundedWorker(timeout_seconds=seconds)
    try:
        with _Patched(verifier, "_SHARED", worker):
            with _Patched(worker, "worker_command", lambda: [sys.executable, "-c", code]):
                failed = api.grade(task, response)["status"]
            worker.timeout_seconds = 60
            again = api.grade(task, response)["status"]
        return [failed, again, worker._process is not None]  # the replacement served again
    finally:
        worker.close()


def scenario_fetch_error(kind: str) -> Any:
    """``dataset_cache.fetch`` when the network fails (``urlopen`` replaced, as 0.4.0's tests do)."""
    import http.client
    import tempfile
    import urllib.error
    import urllib.response
    from email.message import Message

    from modebench import dataset_cache

    class Broken:  # a response whose body fails part-way
        def __init__(self, error: BaseException) -> None:
            self.error, self.headers = error, Message()

        def __enter__(self) -> Broken:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def read1(self, size: int = -1) -> bytes:
            raise self.error

        read = read1

    errors: dict[str, BaseException] = {
        "refused": urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
        "dns": urllib.error.URLError(OSError(-2, "Name or service not known")),
        "timeout": TimeoutError("timed out"),
        "http-503": urllib.error.HTTPError("https://x", 503, "Service Unavailable", Message(), None),
        "disconnected": http.client.RemoteDisconnected("Remote end closed connection without response"),
    }
    during = {"reset-mid-body": ConnectionResetError(104, "Connection reset by peer")}

    def opener(url: str, timeout: float = 0) -> Any:
        if kind in during:
            return Broken(during[kind])
        raise errors[kind]

    with tempfile.TemporaryDirectory() as cache, _Patched(dataset_cache, "urlopen", opener):
        try:
            dataset_cache.fetch("level1_countdown", "eval", cache_dir=cache)
        except Exception as exc:
            return [type(exc).__name__, str(exc), type(exc).__mro__[1].__name__]
        return ["no error"]


def scenario_dead_between_requests(candidate: str, spec: dict[str, Any]) -> Any:
    """A worker killed between two requests: the next request's status, then the one after."""
    from modebench.python_modebench_process import PythonFactorVerifierProcess

    with PythonFactorVerifierProcess(timeout_seconds=60) as worker:
        first = worker.check(candidate, spec)["status"]
        old = worker._process
        old.kill()
        old.wait(timeout=10)
        after = worker.check(candidate, spec)["status"]
        reaped = worker._process is None
        again = worker.check(candidate, spec)["status"]
        return [first, after, reaped, again, worker._process is not None and worker._process.pid != old.pid]


SCENARIOS = {
    name.removeprefix("scenario_"): value
    for name, value in list(globals().items())
    if name.startswith("scenario_")
}


def run(call: dict[str, Any]) -> dict[str, Any]:
    try:
        if call["module"] == "$attribute":
            return {"id": call["id"], "value": attribute_fact(*call["args"])}
        if call["module"] == "$scenario":
            return {"id": call["id"], "value": encode(SCENARIOS[call["function"]](*decode(call["args"])))}
        function = getattr(importlib.import_module(call["module"]), call["function"])
        value = function(*decode(call.get("args", [])), **decode(call.get("kwargs", {})))
        return {"id": call["id"], "value": encode(value)}
    except Exception as exc:  # the exception type and message are what is compared
        return {"id": call["id"], "error": [type(exc).__name__, str(exc)]}


def main() -> None:
    for call in json.load(sys.stdin):
        sys.stdout.write(json.dumps(run(call), sort_keys=True) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
