"""Name the saved shape when it is what broke a run (issue 28 item 7): the window remembers the
last shape typed, and one that suits the user's ops (7x3) breaks ops built for the default, the
built-in examples among them (a 200-element variable): "Incompatible shapes: [7,3] vs. [200]"
turned two example files red with nothing saying the shape was not the default."""

from __future__ import annotations

import re

from gradviz.model import RunResult, RunSettings
from gradviz.vocab import ErrorKind

# words of a shape mismatch in torch, TF and numpy messages
SHAPE_WORDS = re.compile(r"shape|size of tensor|must match the size|broadcast|dimension", re.I)


def shape_hint(results: list[RunResult]) -> str:
    """ "scale_by_variable failed on shapes at the saved shape 7x3, not the default 200: Run ▸
    Reset settings to defaults runs it at that" when an op failed on a shape mismatch at a
    shape other than the default; "" otherwise."""
    default = RunSettings().shape
    failed = [
        r
        for r in results
        if r.error is not None
        and r.error.kind not in (ErrorKind.CANCELLED, ErrorKind.TIMEOUT)
        and tuple(r.request.settings.shape) != default
        and SHAPE_WORDS.search(f"{r.error.type} {r.error.message}")
    ]
    if not failed:
        return ""
    names = sorted({r.name for r in failed})
    shape = "x".join(map(str, failed[0].request.settings.shape))
    them = "them" if len(names) > 1 else "it"
    return (
        f"{', '.join(names)} failed on shapes at the saved shape {shape}, not the default "
        f"{'x'.join(map(str, default))}: Run ▸ Reset settings to defaults runs {them} at that"
    )
