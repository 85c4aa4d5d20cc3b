"""Keep Ray on the loopback interface: with this set before ``ray`` is imported, Ray resolves
this node to 127.0.0.1 instead of the machine's network address (tests talk only to loopback)."""

from __future__ import annotations

import os

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
