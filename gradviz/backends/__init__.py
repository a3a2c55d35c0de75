"""Framework backends. Imported only inside worker processes (they import torch / tensorflow)."""


def load_backend(framework: str, memory_limit: int = 0):
    """`memory_limit`: the bytes the parent lets this worker use (0: none); bounds what it keeps."""
    import importlib

    from gradviz.backends.runner import Backend
    from gradviz.vocab import Framework

    if framework not in tuple(Framework):
        raise ValueError(f"unknown framework {framework!r}: use {' or '.join(Framework)}")
    # the framework's backend module, as vocab.Framework names it
    return Backend(importlib.import_module(Framework(framework).backend).adapter(), memory_limit)
