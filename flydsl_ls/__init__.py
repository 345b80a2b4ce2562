"""flydsl-ls: language server and linter for migrating legacy FlyDSL kernel code."""

__version__ = "0.1.0"
