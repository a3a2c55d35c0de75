"""Open a user's file at a line: $VISUAL, else $EDITOR, with the line in the form the editor
takes (`+LINE FILE` for vi, nano, emacs and most; `-g FILE:LINE` for VS Code; `FILE:LINE` for
Sublime), else the desktop's handler for the file (no line). The editor runs in its own session,
without a shell; the window never waits for it."""

from __future__ import annotations

import os
import shlex
import subprocess

_started: list[subprocess.Popen] = []  # reaped on the next open: no zombie is left


def editor_command(editor: str, path: str, line: int) -> list[str]:
    argv = shlex.split(editor)
    name = os.path.basename(argv[0]) if argv else ""
    if name in ("code", "codium", "code-insiders", "cursor"):
        return argv + ["-g", f"{path}:{line}"]
    if name in ("subl", "sublime_text", "zed"):
        return argv + [f"{path}:{line}"]
    return argv + [f"+{line}", path]


def open_in_editor(where: str) -> str | None:
    """Open "file:line"; returns why it could not, or None."""
    global _started
    _started = [p for p in _started if p.poll() is None]
    path, _, line_text = where.rpartition(":")
    if not path:
        path, line_text = where, "1"
    if not os.path.isfile(path):
        return f"no such file: {path}"
    line = int(line_text) if line_text.isdigit() else 1
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        try:
            _started.append(
                subprocess.Popen(
                    editor_command(editor, path, line),
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        except (OSError, ValueError) as exc:
            return f"could not start the editor {editor!r}: {exc}"
        return None
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    if not QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
        return f"no application opens {path}: set $VISUAL or $EDITOR"
    return None
