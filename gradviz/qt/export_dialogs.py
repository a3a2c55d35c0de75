"""How every export of the app asks and writes: a path (asked unless given), a question before
overwriting, the write (atomic, by the caller's writer), and a message box that says why on
failure; the folder of the last export is where the next one's dialog opens. An export never
overwrites an op file (the window's open ones or the exported results' own).

Dialogs go through the module-level `dialogs` object (class Dialogs): tests replace it, or pass
`dialogs=` to any export function, to answer without blocking.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox

from gradviz.model import RunResult
from gradviz.plots.formats import FIGURE_FORMATS, dialog_filter

IMAGE_FILTERS = ";;".join(dialog_filter(ext) for ext in FIGURE_FORMATS)
FILTERS = {
    **{ext: dialog_filter(ext) for ext in FIGURE_FORMATS},
    ".csv": "CSV table (*.csv)",
    ".npz": "NumPy arrays (*.npz)",
    ".json": "JSON report (*.json)",
}


class Dialogs:
    """The questions an export asks. Override any method (tests: a subclass with fixed answers)."""

    def save_path(self, parent, caption: str, suggested: str, filters: str) -> str | None:
        path, chosen = QFileDialog.getSaveFileName(
            parent, caption, suggested, filters, options=QFileDialog.Option.DontConfirmOverwrite
        )
        if not path:
            return None
        if not os.path.splitext(path)[1]:  # no suffix typed: the chosen filter's
            for ext, f in FILTERS.items():
                if f == chosen:
                    path += ext
        return path

    def folder_path(self, parent, caption: str, start: str) -> str | None:
        return QFileDialog.getExistingDirectory(parent, caption, start) or None

    def confirm_overwrite(self, parent, path: str) -> bool:
        answer = QMessageBox.question(
            parent,
            "Replace file?",
            f"{os.path.basename(path)} already exists in {os.path.dirname(path)}.\nReplace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def error(self, parent, title: str, text: str) -> None:
        QMessageBox.warning(parent, title, text)

    def done(self, parent, text: str) -> None:
        """Tell the user where the file went (status bar when the parent is a main window)."""
        if isinstance(parent, QMainWindow):
            parent.statusBar().showMessage(text, 5000)


dialogs = Dialogs()

_last_folder = ""


def asked(dlg: Dialogs | None) -> Dialogs:
    """The dialogs to ask: the ones given, else the module's (looked up now: tests replace it)."""
    return dlg or dialogs


def folder() -> str:
    return _last_folder or os.getcwd()


def remember_folder(path: str) -> None:
    global _last_folder
    _last_folder = path


def safe_name(text: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return keep.strip("_") or "gradviz"


def as_list(results) -> list[RunResult]:
    if isinstance(results, dict):
        return [r for r in results.values() if r is not None]
    return [r for r in results if r is not None]


def _is_op_file(path: str, inputs: Sequence[str]) -> str | None:
    """The op file `path` names (one the window has open, or one of the exported results'),
    else None: an export never overwrites an input (issue 26, item 2)."""
    for f in inputs:
        try:
            if os.path.samefile(path, f):
                return f
        except OSError:
            continue
    return None


def run_export(
    parent,
    caption: str,
    suggested: str,
    filters: str,
    path: str | None,
    write: Callable[[str], object],
    dlg: Dialogs | None,
    inputs: Sequence[str] = (),
) -> str | None:
    """Path (asked unless given) -> overwrite question -> write -> report. None if not written."""
    dlg = asked(dlg)
    if path is None:
        path = dlg.save_path(parent, caption, os.path.join(folder(), suggested), filters)
        if not path:
            return None
    path = os.path.abspath(path)
    op_file = _is_op_file(path, inputs)
    if op_file is not None:
        dlg.error(
            parent,
            "Export refused",
            f"{path} is the op file {op_file}; exporting there "
            "would overwrite it. Choose another name.",
        )
        return None
    if os.path.exists(path) and not dlg.confirm_overwrite(parent, path):
        return None
    try:
        write(path)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, never raised into Qt
        dlg.error(parent, "Export failed", f"Could not write {path}:\n{type(exc).__name__}: {exc}")
        return None
    remember_folder(os.path.dirname(path))
    dlg.done(parent, f"saved {path}")
    return path
