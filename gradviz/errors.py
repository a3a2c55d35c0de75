"""The one base of gradviz's own exceptions. Standard library only, in the lowest layer, so every
part can derive from it: `except GradvizError` catches what gradviz raises and nothing of the
user's. A class keeps the built-in base it had beside it (OSError, ValueError, ...), so code that
catches those still does. Not under it, BaseExceptions on purpose (an `except Exception` must
not swallow them): engine.child's RequestCancelled and engine.stop_signals' Stopped."""

from __future__ import annotations


class GradvizError(Exception):
    """Raised by gradviz itself (not by user code)."""
