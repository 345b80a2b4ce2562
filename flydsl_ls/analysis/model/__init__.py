"""The model layer: text, syntax, scopes and names, fx types, value flow and the facts rules share.

Imports nothing above it (rules, engine, incremental, server)."""
