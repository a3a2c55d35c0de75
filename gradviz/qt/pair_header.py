"""The line above the grid: the shown pair's name and file:line per framework, and while its ops
run, each one's elapsed time against its timeout (redrawn twice a second)."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel

from gradviz.app.progress import QUEUED, RUNNING
from gradviz.app.state import AppState
from gradviz.model import OpKey
from gradviz.qt.theme import surface

STYLE = "font-size: 14px; padding: 2px 4px"


class PairHeader(QLabel):
    def __init__(self, state: AppState, parent=None):
        super().__init__("", parent)
        self.state = state
        self.pair: str | None = None
        self.setStyleSheet(STYLE)
        self.setTextFormat(Qt.RichText)
        self._tick = QTimer(self)
        self._tick.setInterval(500)
        self._tick.timeout.connect(self._draw)
        state.subscribe("progress", self._progress)
        state.subscribe("stale", self._draw)

    def show_pair(self, pair: str | None) -> None:
        self.pair = pair
        self._draw()

    def restyle(self) -> None:
        # a style sheet with a box (padding) keeps the palette it was polished with: set again,
        # it takes the scheme's (the header stayed black on the dark window)
        self.setStyleSheet("")
        self.setStyleSheet(STYLE)
        self._draw()

    def _progress(self, key) -> None:
        if self.pair is not None and self.state.loaded.pair_name(key) == self.pair:
            self._draw()

    def _draw(self) -> None:
        if not self.pair:
            self.setText("")
            self._tick.stop()
            return
        parts, running = [], False
        for fw, op in self.state.loaded.pairs().get(self.pair, {}).items():
            text = (
                f"<span style='color:{surface('faint')}'>{fw}</span> {os.path.basename(op.where)}"
            )
            key = OpKey.of_op(op)
            st = self.state.progress.states.get(key)
            if st == RUNNING:
                running = True
                asked = self.state.results.asked_for(key)
                limit = f" / {asked.settings.timeout:g} s timeout" if asked is not None else ""
                text += (
                    f" <span style='color:{surface('running')}'>running "
                    f"{self.state.progress.elapsed(key) or 0:.1f} s{limit}</span>"
                )
            elif st == QUEUED:
                text += f" <span style='color:{surface('muted')}'>queued</span>"
            parts.append(text)
        stale = any(
            self.state.is_stale(OpKey.of_op(op))
            for op in self.state.loaded.pairs().get(self.pair, {}).values()
        )
        note = (
            f" &nbsp; <span style='color:{surface('stale')}'>stale: the settings changed since this run"
            "</span>"
            if stale and not running
            else ""
        )
        self.setText(f"<b>{self.pair}</b> &nbsp; " + " · ".join(parts) + note)
        if running:
            self._tick.start()
        else:
            self._tick.stop()
