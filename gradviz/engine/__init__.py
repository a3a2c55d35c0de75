"""Worker processes and the Engine facade (no framework import here)."""
from gradviz.engine.session import Engine

__all__ = ["Engine"]
