"""File ▸ Open module…: a dotted module name (`mypkg.quant_ops`), resolved to its file without
importing anything in the window's process (module_files.resolve)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QInputDialog, QWidget

from gradviz.module_files import ModuleNameError, resolve

PROMPT = (
    "Module name, e.g. mypkg.quant_ops\n"
    "(looked for in the current folder, then on gradviz's sys.path)"
)


def ask_module_file(parent: QWidget, last: str = "") -> tuple[str | None, str]:
    """(file, name) of the module the user names; (None, "") when cancelled. A name that
    resolves to nothing keeps the dialog open, saying why."""
    dialog = QInputDialog(parent)
    dialog.setObjectName("openModuleDialog")
    dialog.setWindowTitle("Open module")
    dialog.setLabelText(PROMPT)
    dialog.setTextValue(last)
    try:
        while dialog.exec() == QDialog.Accepted:
            name = dialog.textValue().strip()
            try:
                return resolve(name), name
            except ModuleNameError as exc:
                dialog.setLabelText(f"{exc}\n\n{PROMPT}")
        return None, ""
    finally:
        dialog.deleteLater()
