"""``hf://datasets/OWNER/NAME@COMMIT``: a Hub dataset repository pinned to one commit.

Only a full 40-hex commit pins data: a branch or tag name can move, so it is refused here, before
anything is fetched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from modebench.validation import InputError

__all__ = ["PREFIX", "HubAddress", "parse_address"]

PREFIX = "hf://"
_ADDRESS = re.compile(r"hf://datasets/(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)@(?P<rev>[^/@]+)")
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class HubAddress:
    repo_id: str  # OWNER/NAME
    commit: str  # 40 lowercase hex digits

    def __str__(self) -> str:
        return f"{PREFIX}datasets/{self.repo_id}@{self.commit}"


def parse_address(text: str) -> HubAddress:
    """Parse ``hf://datasets/OWNER/NAME@COMMIT``; anything else is an ``InputError``."""
    match = _ADDRESS.fullmatch(text)
    if match is None or ".." in match["repo"]:
        raise InputError(f"Hub registry must be hf://datasets/OWNER/NAME@COMMIT: {text}")
    if not _COMMIT.fullmatch(match["rev"]):
        raise InputError(
            f"Hub registry must be pinned to a commit (40 hexadecimal digits), not {match['rev']!r}: "
            "a branch or tag name can move"
        )
    return HubAddress(match["repo"], match["rev"])
