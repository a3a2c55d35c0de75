"""Esc in the run settings' text and number fields (shape, range, seed, depth, timeout,
upstream) does what it does in such a field: it undoes the edit made since the field took the
focus (or since Enter), and with nothing to undo it leaves the field for the op tree. It never
reaches the window's Esc (Run ▸ Cancel all): Esc to drop a half-typed shape during a long run
threw the whole run away. Shift+Esc (Skip this op) is not claimed."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit, QWidget


def _plain_escape(ev) -> bool:
    return (
        ev.key() == Qt.Key.Key_Escape and not ev.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    )


def _text(field: QWidget) -> str:
    return field.currentText() if isinstance(field, QComboBox) else field.text()


class FieldEscape(QObject):
    """Event filter over `fields` (QLineEdit, spin boxes, editable combo boxes)."""

    def __init__(self, fields, next_focus: QWidget, parent=None):
        super().__init__(parent)
        self.next_focus = next_focus
        self._kept: dict[QWidget, tuple] = {}  # field -> (its text, its value) to go back to
        self.fields = list(fields)
        for f in self.fields:
            f.installEventFilter(self)
            if isinstance(f, QComboBox) and f.lineEdit() is not None:
                f.lineEdit().installEventFilter(self)
                f.lineEdit().editingFinished.connect(lambda f=f: self._keep(f))
            else:
                f.editingFinished.connect(lambda f=f: self._keep(f))

    def _field(self, obj):
        """The field an event of `obj` belongs to (an editable combo's own line edit)."""
        if obj in self.fields:
            return obj
        parent = obj.parent() if isinstance(obj, QLineEdit) else None
        return parent if parent in self.fields else None

    def eventFilter(self, obj, ev):
        t = ev.type()
        if t not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress, QEvent.Type.FocusIn):
            return False
        field = self._field(obj)
        if field is None:
            return False
        if t == QEvent.Type.FocusIn:
            self._keep(field)
            return False
        if not _plain_escape(ev):
            return False
        if t == QEvent.Type.ShortcutOverride:  # claimed before the window's shortcuts see it
            ev.accept()
            return True
        self.escape(field)
        return True

    def _keep(self, field) -> None:
        value = field.value() if isinstance(field, QAbstractSpinBox) else None
        self._kept[field] = (_text(field), value)

    def escape(self, field) -> None:
        """Undo the unfinished edit, else hand the focus to the op tree."""
        text, value = self._kept.get(field, (_text(field), None))
        if _text(field) == text:
            self.next_focus.setFocus(Qt.FocusReason.ShortcutFocusReason)
        elif isinstance(field, QAbstractSpinBox):
            field.setValue(value)  # also redraws text typed but not yet valid
        elif isinstance(field, QComboBox):
            field.setCurrentText(text)
        else:
            field.setText(text)
