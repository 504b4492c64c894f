"""A real browser as a TMM web client (README.md here; make browser-test)."""
