"""Worker processes and the Engine facade (no framework import here).

`Engine` is imported on first use: a worker process imports gradviz.engine.child, and with it
this package, before its framework; the facade (the model, the passes, the worker handles) is
the parent's and would only delay the framework's import there."""

__all__ = ["Engine"]


def __getattr__(name: str):
    if name == "Engine":
        from gradviz.engine.engine import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
