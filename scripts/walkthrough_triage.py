"""Issue 28's walkthrough: the window as a triage tool, one PNG per item, on the real window
(scripts/walkthrough.py's Walk: a first launch with a throw-away HOME, real clicks and keys).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/walkthrough_triage.py [OUT_DIR]

Writes 28*_*.png to OUT_DIR (default docs/walkthrough/); README.md "Walkthrough" says what each
shows.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from walkthrough import ROOT, Walk, only  # noqa: E402

# Buggy ops of a researcher: a backward 2x and one 5x too big for y, a right one, one that raises
# and one whose double backward fails (once_differentiable), and one that hangs (for Cancel).
TRIAGE_OPS = '''"""Walkthrough ops for issue 28."""
import time

import torch
from torch.autograd.function import once_differentiable


class Scaled2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, 2 * g * x


class Scaled5(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, 5 * g * x


class CubeOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        raise ValueError("my backward is broken")
'''

HANG_OPS = '''"""Walkthrough op for issue 28: a backward that never ends (Esc stops it)."""
import torch


class Hangs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        while True:
            pass
'''


# Before and after: the same op saved with a 2x backward, then fixed.
FIX_OPS = '''"""Walkthrough op for issue 28: a backward {what}."""
import torch


class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return {factor} * g
'''


class TriageWalk(Walk):
    def load(self, name: str, source: str) -> list:
        win = self.win
        path = os.path.join(self.home, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        win.open_files([path])
        self.wait(
            lambda: loaded and any(k[1] == path for k in win.state.loaded.ops), f"{name} loaded"
        )
        return [k for k in win.state.loaded.ops if k[1] == path]

    def triage(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        win = self.win
        keys = self.load("triage_ops.py", TRIAGE_OPS)
        for name in ("double_backward", "precision"):
            win.settings_panel.checks[name].setChecked(True)
        self.run_and_wait(lambda: win.run(keys), "the triage ops")
        self.click_tab(win.worst)
        middle = win.tabs.parent()
        middle.setSizes([430, 470])
        self.shot("28_worst_tensors.png", "Worst tensors: every op's tensors, worst first")
        self.click_op("Scaled2")
        self.click_tab(win.numbers)
        t = win.numbers.table
        QTest.keyClicks(win.numbers.filter, "torch")
        t.setFocus()
        t.selectRow(0)
        QTest.mouseClick(
            t.viewport(),
            Qt.LeftButton,
            Qt.ShiftModifier,
            t.visualRect(t.model().index(1, 0)).center(),
        )
        QTest.keyClick(t, Qt.Key_C, Qt.ControlModifier)
        self.shot(
            "28b_numbers_sorted_copied.png",
            f"Numbers: worst first, filter 'torch', two rows copied: {win.statusBar().currentMessage()!r}",
        )
        self.click_tab(win.checks_matrix)
        self.click_op("Raises")
        win.checks_matrix.choose(("torch", keys[0][1], "Raises"), "precision")
        self.shot(
            "28c_checks_last_run.png",
            "Checks: CubeOnce's failed double backward (≠ in the tree), Raises not run",
        )
        middle.setSizes([640, 260])
        for name in ("double_backward", "precision"):
            win.settings_panel.checks[name].setChecked(False)

    def header_tooltip(self) -> None:
        from PySide6.QtCore import QEvent, QPoint
        from PySide6.QtGui import QHelpEvent
        from PySide6.QtWidgets import QApplication, QToolTip

        win = self.win
        self.click_op("Scaled2")
        row = win.grid.rows["y"]
        label = row.verdicts
        pos = QPoint(4, 4)
        QApplication.sendEvent(label, QHelpEvent(QEvent.ToolTip, pos, label.mapToGlobal(pos)))
        self.wait(QToolTip.isVisible, "the header's tooltip")
        self.shot(
            "28d_header_tooltip.png", "the row header's tooltip (over the plots: none)", screen=True
        )
        QToolTip.hideText()

    def cancel(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        win = self.win
        keys = self.load("hang_ops.py", HANG_OPS)
        self.click_op("Hangs")
        pid = win.bridge.engine.workers["torch"].pid()
        done = []
        win.runDone.connect(done.append)
        QTest.keyClick(win.tree, Qt.Key_R, Qt.ControlModifier)
        self.wait(lambda: win.state.in_flight(), "Hangs running")
        QTest.keyClick(win.tree, Qt.Key_Escape)
        self.wait(lambda: bool(done), "the cancel")
        win.runDone.disconnect(done.append)
        kept = win.bridge.engine.workers["torch"].pid() == pid
        self.shot(
            "28e_cancel_kept_worker.png",
            f"Esc right after Ctrl+R: {win.summary.text()!r}; torch worker kept: {kept}",
        )
        del keys

    def before_after(self) -> None:
        """Item 5: an op fixed and run again, drawn against its earlier run."""
        win = self.win
        keys = self.load("triple_ops.py", FIX_OPS.format(what="2x too big", factor=6))
        self.click_op("Triple")
        self.run_and_wait(lambda: win.run(keys), "Triple, 2x too big")
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        with open(keys[0][1], "w", encoding="utf-8") as f:  # the fix, saved: hot reload
            f.write(FIX_OPS.format(what="fixed", factor=3))
        self.wait(
            lambda: loaded and len(win.state.history.runs(keys[0])) == 2 and not win.bridge.running,
            "the fix reloaded and run",
        )
        self.click_op("Triple")
        win.run_picker.pick(win.run_picker.itemData(1))
        self.shot(
            "28f_before_after.png",
            f"the fix run: Δ {win.tree.shown_mark(keys[0])[2].splitlines()[-1]!r}; "
            f"the difference view against {win.run_picker.currentText()!r}",
        )

    def flow_small(self) -> None:
        """Item 6: a stack run at 1000x700, the flow chart's readout over a layer."""
        from PySide6.QtCore import QPoint
        from PySide6.QtTest import QTest

        from gradviz.qt.export.flow import flow_layout

        win = self.win
        self.click_op("round_ste")
        sp = win.settings_panel
        sp.graph.setCurrentIndex(sp.graph.findData("stack"))
        sp.depth.setValue(3)
        self.run_and_wait(lambda: win.run(win.state.loaded.keys_of("round_ste")), "a stack run")
        win.resize(1000, 700)
        self.wait(lambda: win.height() == 700, "1000x700")
        view = win.flow_view
        plot = flow_layout(view.figure, view.width(), view.height()).plots[0]
        QTest.mouseMove(view, QPoint(int(plot.x + plot.w / 2), int(plot.y + plot.h / 2)))
        self.wait(view.readout.isVisible, "the flow readout")
        self.shot(
            "28g_flow_readout_1000x700.png",
            f"1000x700 stack run: two whole rows; readout {view.readout.text()!r}",
        )
        win.act_reset_settings.trigger()
        win.resize(1500, 950)

    def notes_dense(self) -> None:
        """Item 1: dense data fills the plots; each note is on its line under the x axis."""
        win = self.win
        self.click_op("mul_weights")
        win.settings_panel.shape.setText("40000")
        keys = win.state.loaded.keys_of("mul_weights")
        self.run_and_wait(lambda: win.run(keys), "mul_weights on 40,000 elements")
        self.wait(lambda: bool(win.grid.rows) and win.grid.plot_count() > 0, "the dense plots")
        for name in list(win.grid.rows):
            win.grid.set_view(name, "values")
        self.shot(
            "28h_notes_dense.png",
            "mul_weights on 40,000 elements: the notes under the x axes, none over the data",
        )
        win.act_reset_settings.trigger()

    def jax_twins(self) -> None:
        """Issue 31: one op in torch, TF and JAX, a column group each."""
        from gradviz.vocab import Framework

        if not Framework.JAX.installed:
            print("jax is not installed: no 31_* shots", flush=True)
            return
        win = self.win
        corpus = os.path.join(ROOT, "tests", "corpus", "jax")
        files = [os.path.join(corpus, f"twins_{fw}.py") for fw in ("torch", "tf", "jax")]
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        win.open_files(files)
        self.wait(
            lambda: loaded and all(any(k[1] == f for k in win.state.loaded.ops) for f in files),
            "the twins",
        )
        keys = [k for k in win.state.loaded.ops if k[1] in files]
        self.run_and_wait(lambda: win.run(keys), "the torch, TF and JAX twins")
        self.click_op("cube")
        self.wait(lambda: "x" in win.grid.rows, "cube's rows")
        for name in list(win.grid.rows):
            win.grid.set_view(name, "values")
        self.wait(lambda: len(win.grid.rows["x"].cells) == 9, "nine columns")
        win.tabs.setCurrentWidget(win.numbers)  # the parity table: each two frameworks
        self.wait(lambda: win.numbers.parity.rowCount() > 0, "the parity rows")
        # the tabs given room as a drag of the splitter's handle does: at 1000x700 (flow_small)
        # the grid's two rows left them their tab bar, and the window keeps that when it grows
        win.numbers.filter.clear()
        room = win.grid_room
        upper, lower = room.middle.sizes()
        if lower < 300:
            need = room.needed()
            room.middle.setSizes([need, upper + lower - need])
        self.settle()
        self.shot(
            "31_jax_three_frameworks.png",
            "cube in torch, TF and JAX: a column group each, titles in the framework's colour",
        )
        bar = win.grid.horizontalScrollBar()
        bar.setValue(bar.maximum())
        self.shot("31b_jax_group_scrolled.png", "scrolled right: JAX's group whole")
        bar.setValue(0)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "docs", "walkthrough"))
    ap.add_argument("--only", metavar="STEPS", help="these steps only, e.g. jax_twins,flow_small")
    args = ap.parse_args(argv)
    out = args.out
    home = tempfile.mkdtemp(prefix="gradviz-walk-")
    os.environ["HOME"] = home
    os.environ["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    os.makedirs(out, exist_ok=True)
    walk = TriageWalk(out, home)
    try:
        walk.start()
        for step in only(
            args.only,
            walk.triage,
            walk.header_tooltip,
            walk.before_after,
            walk.flow_small,
            walk.notes_dense,
            walk.jax_twins,
            walk.cancel,
        ):
            step()
        walk.close()
        return 0
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
