"""Framework backends. Imported only inside worker processes (they import torch / tensorflow)."""


def load_backend(framework: str, memory_limit: int = 0):
    """`memory_limit`: the bytes the parent lets this worker use (0: none); bounds what it keeps."""
    from gradviz.backends.runner import Backend
    if framework == "torch":
        from gradviz.backends.torch_backend import adapter
    elif framework == "tf":
        from gradviz.backends.tf_backend import adapter
    else:
        raise ValueError(f"unknown framework {framework!r}: use torch or tf")
    return Backend(adapter(), memory_limit)
