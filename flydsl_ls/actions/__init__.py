"""Diagnostics to edits: applying fixes, fix-all, suppression comments."""
