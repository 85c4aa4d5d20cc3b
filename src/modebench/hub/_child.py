"""One Hub download in a child process: ``python -m modebench.hub._child REQUEST_JSON``.

The parent (:mod:`modebench.hub.origin`) owns the deadline and kills this process's group when it
passes; ``huggingface_hub`` retries a stalled read on its own, so only a process boundary gives a
hard stop. Here the file's metadata is checked first (the server must answer for the pinned commit,
and declare a size within the cap), then ``hf_hub_download`` fetches it into the Hub cache while a
progress hook stops it once more bytes than the cap arrive.

One line of JSON on stdout: ``{"path": ...}`` or ``{"error": kind, "detail": ...}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any


class _TooLarge(Exception):
    pass


def _download(request: dict[str, Any]) -> dict[str, Any]:
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url  # noqa: PLC0415 - optional extra: data (huggingface_hub)
    from huggingface_hub.utils.tqdm import tqdm as hub_tqdm  # noqa: PLC0415 - optional extra: data (huggingface_hub)

    limit = int(request["max_bytes"])
    commit = str(request["commit"])

    class Guard(hub_tqdm):
        """A silent progress bar that stops the transfer once it passes the byte cap."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
            self.received = 0

        def update(self, n: int | float | None = 1) -> None:
            self.received += int(n or 0)
            if self.received > limit:
                raise _TooLarge
            super().update(n)

    url = hf_hub_url(request["repo_id"], request["filename"], repo_type="dataset", revision=commit)
    metadata = get_hf_file_metadata(url, timeout=float(request["timeout"]))
    if metadata.commit_hash != commit:
        return {"error": "commit", "detail": f"server answered for commit {metadata.commit_hash}"}
    if metadata.size is not None and metadata.size > limit:
        return {"error": "size", "detail": str(metadata.size)}
    try:
        path = hf_hub_download(
            request["repo_id"],
            request["filename"],
            repo_type="dataset",
            revision=commit,
            cache_dir=request["cache_dir"],
            etag_timeout=float(request["timeout"]),
            tqdm_class=Guard,
        )
    except _TooLarge:
        return {"error": "size", "detail": f"more than {limit} bytes"}
    return {"path": str(path)}


def main(argv: list[str]) -> int:
    request = json.loads(argv[0])
    try:
        reply = _download(request)
    except Exception as exc:  # the child's one guard: every failure becomes a reply the parent maps
        reply = {"error": "failed", "detail": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    print(json.dumps(reply), flush=True)
    return 0 if "path" in reply else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
