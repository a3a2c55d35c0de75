"""Worker processes and the Engine facade (no framework import here)."""

from gradviz.engine.engine import Engine

__all__ = ["Engine"]
