"""Autobahn|Testsuite's WebSocket cases re-created in Python (README.md here; make conformance)."""
