"""Integrations with other tools; each needs its optional extra (``docs/ingest.md``)."""
