"""Framework backends. Imported only inside worker processes (they import torch / tensorflow)."""


def load_backend(framework: str):
    from gradviz.backends.runner import Backend
    if framework == "torch":
        from gradviz.backends.torch_backend import adapter
    elif framework == "tf":
        from gradviz.backends.tf_backend import adapter
    else:
        raise ValueError(f"unknown framework {framework!r}: use torch or tf")
    return Backend(adapter())
