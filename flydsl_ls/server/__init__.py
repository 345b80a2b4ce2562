"""The language server: pygls wiring only, one module per LSP concern (see app.py)."""
