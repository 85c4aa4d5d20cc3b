"""0.4.0's Python-verifier worker entry point; here every domain shares one worker program."""

from __future__ import annotations

from modebench.verifier_worker import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
