"""Case tables for benchmarks/fix_audit.py (loaded by path: ``--cases <name>`` reads ``<name>.py`` here)."""
