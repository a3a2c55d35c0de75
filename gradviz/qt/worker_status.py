"""The status bar's per-framework worker labels: loading, ready (with the import time), running,
failed, restarting."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from gradviz.qt.theme import FRAMEWORK_LABELS, state_color, surface


class WorkerLabels:
    def __init__(self, status_bar, frameworks) -> None:
        self.labels: dict[str, QLabel] = {}
        self.states: dict = {}  # framework -> the WorkerState shown
        for fw in frameworks:
            lab = QLabel(f"{FRAMEWORK_LABELS.get(fw, fw)}: waiting")
            lab.setStyleSheet(f"padding: 0 8px; color: {surface('muted')}")
            self.labels[fw] = lab
            status_bar.addPermanentWidget(lab)

    def show(self, st) -> bool:
        """Show a WorkerState; True when the worker has failed to load its framework."""
        lab = self.labels.get(st.framework)
        if lab is None:
            return False
        name = FRAMEWORK_LABELS.get(st.framework, st.framework)
        text = {
            "starting": f"{name}: loading…",
            "ready": f"{name} {st.version}: ready"
            + (f" ({st.import_s:.1f} s)" if st.import_s else ""),
            "busy": f"{name} {st.version}: running",
            "failed": f"{name}: failed",
            "stopped": f"{name}: restarting" if st.detail == "replacing" else f"{name}: stopped",
        }.get(st.state, st.state)
        lab.setText(("● " if st.state != "failed" else "✗ ") + text)
        lab.setToolTip(st.detail or text)
        lab.setStyleSheet(f"padding: 0 8px; color: {state_color(st.state)}")
        self.states[st.framework] = st
        return st.state == "failed"

    def restyle(self) -> None:
        """The window switched colour scheme: each label in its state's colour again."""
        for fw, lab in self.labels.items():
            st = self.states.get(fw)
            lab.setStyleSheet(
                f"padding: 0 8px; color: {state_color(st.state) if st else surface('muted')}"
            )
