"""A PNG file from an RGB image, its rows deflated in pieces on threads (zlib lets go of the GIL).

Qt's writer deflates on one core: ~0.15 s of a cold `gradviz run --plot` (a 200-element grid,
6 Mpx), most of its last step. Here the rows (filter type 0, as plots are flat colour) are cut
into one piece per core, each deflated on its own and ended with a sync flush but the last, and
the pieces joined into the one zlib stream PNG requires (as pigz does): any inflater reads it
as one. ~0.05 s for the same image, ~8% more bytes than Qt at its level 5 with adaptive filters.
"""

from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

LEVEL = 3  # the 6 Mpx grid: 0.053 s, 1144 KiB; zlib's default 6: 0.081 s, 1085 KiB
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MIN_PIECE = 1 << 20  # bytes: smaller images go in one piece


def png_bytes(rgb: np.ndarray, dots_per_meter: int) -> bytes:
    """The PNG of `rgb` (height x width x 3 uint8, any strides), with its pixel density (the
    pHYs chunk)."""
    height, width, _ = rgb.shape
    line = 1 + 3 * width
    rows = np.zeros((height, line), np.uint8)  # each row's first byte: filter type 0 (none)
    np.ndarray((height, width, 3), np.uint8, rows, 1, (line, 3, 1))[...] = rgb
    raw = memoryview(rows).cast("B")
    pieces = max(1, min(os.cpu_count() or 1, 4, len(raw) // _MIN_PIECE))
    step = -(-height // pieces) * line  # whole rows
    parts = [raw[i : i + step] for i in range(0, len(raw), step)]
    with ThreadPoolExecutor(len(parts), thread_name_prefix="gradviz-png") as pool:
        done = [pool.submit(_deflate, p, i == len(parts) - 1) for i, p in enumerate(parts)]
        check = zlib.adler32(raw)  # meanwhile, here
        body = b"".join(f.result() for f in done)
    # 0x78 0x9c: deflate with a 32 KiB window (the level bits are informative only)
    idat = b"\x78\x9c" + body + check.to_bytes(4, "big")
    return b"".join(
        [
            _SIGNATURE,
            _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
            _chunk(b"pHYs", struct.pack(">IIB", dots_per_meter, dots_per_meter, 1)),
            _chunk(b"IDAT", idat),
            _chunk(b"IEND", b""),
        ]
    )


def _deflate(part: memoryview, last: bool) -> bytes:
    c = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)  # raw deflate: the pieces share one header
    return c.compress(part) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(data, zlib.crc32(kind))
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
