"""How the command line writes paths, places, errors and tables (gradviz.testing's report too)."""

from __future__ import annotations

import os
import textwrap


def rel_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def where_text(where: str) -> str:
    if not where:
        return ""
    path, _, line = where.rpartition(":")
    return f"{rel_path(path)}:{line}" if path else where


def error_paragraph(title: str, err) -> str:
    """One paragraph: what failed, where in the user's file, and the user's own frames."""
    at = f" at {where_text(err.where)}" if err.where else ""
    lines = [f"{title}{at}", f"  {err.type}: " + err.message.replace("\n", "\n  ")]
    if err.traceback.strip():
        lines.append("  your code, innermost last:")
        lines.append(textwrap.indent(err.traceback.rstrip(), "  "))
    return "\n".join(lines)


def rel_where(where: str) -> str:
    path, _, line = where.rpartition(":")
    return f"{rel_path(path)}:{line}"


def table(header, rows, out) -> None:
    widths = (
        [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        if rows
        else [len(h) for h in header]
    )
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    print(fmt.format(*header).rstrip(), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print(fmt.format(*[str(x) for x in r]).rstrip(), file=out)


def err_num(metrics: dict, key: str) -> str:
    from gradviz.compare.numbers import max_abs_text

    return max_abs_text(metrics.get(key))
