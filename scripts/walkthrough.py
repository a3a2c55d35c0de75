"""Issue 13's walkthrough: the real app window, driven as a new user would, one PNG per item.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/walkthrough.py \
        [OUT_DIR] [--readme docs/screenshot.png]

It builds the window the `gradviz` entry point builds (gradviz.qt.app.open_window) with a
throw-away HOME and XDG_CONFIG_HOME, so no saved settings play a part and this is a first
launch. Clicks, keys, wheel turns and mouse moves are sent to the real widgets (QTest, wheel
events); the run settings a user types are set on their widgets. Each step waits on the state it
shows (never on a time alone), then saves the window (or the screen, for a tooltip) to OUT_DIR
(default docs/walkthrough/) in 256 colours. README.md "Walkthrough" says what each image shows.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# this checkout's gradviz, not the editable install's: from a worktree the walkthrough showed the
# main checkout's window (its workers run the parent's gradviz folder, so they follow)
sys.path.insert(0, ROOT)
EXAMPLES = os.path.join(ROOT, "resources", "examples")
STEP_TIMEOUT_S = 240.0  # a step that never reaches its state fails the walkthrough

# An op that is caught running (item 5), and one that runs quickly after it in the same queue.
SLOW_OPS = '''"""Walkthrough ops: one that takes its time, one that is right."""
import time

import torch


class SlowDouble(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(40)          # caught running; Skip stops it
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
'''

# An op whose quick pass (custom, default: float32) comes back at once and whose numeric pass
# (float64) takes its time: Cancel all during it keeps what came back.
SLOW_NUMERIC_OPS = '''"""Walkthrough op: the numeric reference takes its time."""
import time

import torch


class SlowNumeric(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.dtype == torch.float64:        # the numeric pass runs the op in float64
            time.sleep(40)
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
'''


def small_png(image):
    """The image in its own 256 most frequent colours (a screenshot is mostly flat colour; only
    antialiased edges are approximated): a third of the bytes of full colour, and verdict tints
    stay the colours the window paints, which Qt's fixed palette shifted (peach became red)."""
    import numpy as np
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    rgb = image.convertToFormat(QImage.Format_RGB32)
    pixels = np.frombuffer(rgb.constBits(), np.uint32, count=rgb.width() * rgb.height())
    values, counts = np.unique(pixels, return_counts=True)
    table = [int(v) for v in values[np.argsort(counts)[-256:]]]
    return rgb.convertToFormat(QImage.Format_Indexed8, table, Qt.ThresholdDither | Qt.AvoidDither)


class Walk:
    def __init__(self, out: str, home: str):
        from PySide6.QtWidgets import QApplication

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        self.app.setApplicationName("gradviz")
        self.app.setOrganizationName("gradviz")
        self.out, self.home = out, home
        self.notes: list[str] = []

    # --- waiting and input ---------------------------------------------------------------------
    def settle(self, n: int = 5) -> None:
        from PySide6.QtWidgets import QApplication

        for _ in range(n):
            QApplication.processEvents()
            time.sleep(0.02)

    def wait(self, cond, what: str, timeout: float = STEP_TIMEOUT_S) -> None:
        from PySide6.QtWidgets import QApplication

        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise TimeoutError(f"walkthrough: gave up waiting for {what}")
            QApplication.processEvents()
            time.sleep(0.02)
        self.settle()

    def run_and_wait(self, start, what: str) -> list:
        """Call start() (a click or a key) and wait for the runDone it leads to."""
        done = []
        self.win.runDone.connect(done.append)
        try:
            start()
            self.wait(lambda: bool(done), what)
        finally:
            self.win.runDone.disconnect(done.append)
        return done[0]

    def click(self, widget, pos=None) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        QTest.mouseClick(
            widget, Qt.LeftButton, Qt.NoModifier, pos
        ) if pos is not None else QTest.mouseClick(widget, Qt.LeftButton)
        self.settle()

    def click_tool(self, action) -> None:
        """Click the tool bar button of `action`."""
        from PySide6.QtWidgets import QToolBar

        bar = self.win.findChild(QToolBar, "runToolbar")
        self.click(bar.widgetForAction(action))

    def click_op(self, pair: str) -> None:
        """Click the op's line in the op tree (its first framework)."""
        tree = self.win.tree
        item = next(it for key, it in tree._items.items() if tree.loaded.pair_name(key) == pair)
        tree.scrollToItem(item)
        self.settle()
        rect = tree.visualItemRect(item)
        self.click(tree.viewport(), rect.center())
        self.wait(lambda: tree.current_pair() == pair, f"{pair} selected")

    def click_tab(self, widget) -> None:
        bar = self.win.tabs.tabBar()
        self.click(bar, bar.tabRect(self.win.tabs.indexOf(widget)).center())

    def wheel(self, widget, pos, ctrl: bool = False, down: bool = True, clicks: int = 1) -> None:
        from PySide6.QtCore import QPoint, QPointF, Qt
        from PySide6.QtGui import QWheelEvent
        from PySide6.QtWidgets import QApplication

        for _ in range(clicks):
            ev = QWheelEvent(
                QPointF(pos),
                QPointF(widget.mapToGlobal(pos)),
                QPoint(0, 0),
                QPoint(0, -120 if down else 120),
                Qt.NoButton,
                Qt.ControlModifier if ctrl else Qt.NoModifier,
                Qt.NoScrollPhase,
                False,
            )
            QApplication.sendEvent(widget, ev)
        self.settle()

    def plot_point(self, row, cell, x=None, y=None):
        """Canvas viewport position of (x, y) in a plot's data, or of its centre."""
        from PySide6.QtCore import QPointF

        vb = cell.slot.vb
        scene = vb.sceneBoundingRect().center() if x is None else vb.mapViewToScene(QPointF(x, y))
        return row.canvas.mapFromScene(scene)

    def shot(self, name: str, note: str, screen: bool = False) -> None:
        """Save the window (or the whole screen: tooltips and menus are their own windows)."""
        from PySide6.QtGui import QGuiApplication

        self.settle(10)
        path = os.path.join(self.out, name)
        img = QGuiApplication.primaryScreen().grabWindow(0) if screen else self.win.grab()
        if not small_png(img.toImage()).save(path, "PNG", 9):
            raise OSError(f"could not write {path}")
        self.notes.append(f"{name}: {note}")
        print(f"wrote {path}: {note}", flush=True)

    # --- the walk ------------------------------------------------------------------------------
    def start(self) -> None:
        from PySide6.QtCore import QTimer

        from gradviz.qt.app import open_window

        self.win, run = open_window((), run=False)  # as `gradviz` with no files
        assert run, "a throw-away HOME should be a first launch"
        self.win.resize(1500, 950)
        self.win.move(0, 0)
        self.win.show()
        self.run_and_wait(
            lambda: QTimer.singleShot(0, lambda: self.win.start(run=run)),
            "the first launch's run of the built-in examples",
        )
        self.shot("00_first_launch.png", "first launch: the built-in examples already run")

    def item1_wheel(self) -> None:
        win = self.win
        self.click_op("mul_layer")
        grid = win.grid
        self.wait(lambda: "x" in grid.rows and grid.rows["x"].cells, "mul_layer rows")
        row = grid.rows["x"]
        cell = next(c for c in row.cells if c.has_data)
        self.wheel(
            row.canvas.viewport(), self.plot_point(row, cell), ctrl=True, down=False, clicks=2
        )
        bar = grid.verticalScrollBar()
        self.wheel(row.canvas.viewport(), self.plot_point(row, cell), clicks=1)
        self.shot(
            "01_wheel_scroll.png",
            f"mul_layer: Ctrl+wheel zoomed row x, then the wheel over it scrolled the grid "
            f"(bar {bar.value()}/{bar.maximum()}); rows {len(grid.rows)}, "
            f"row height {row.height()} px",
        )
        self.click(row.fit_button)

    def item2_tree(self) -> None:
        win = self.win
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        win.act_traps.trigger()  # Help > Open trap examples
        from gradviz.catalog import trap_examples

        traps = {os.path.abspath(f) for f in trap_examples()}  # one per installed framework
        self.wait(
            lambda: loaded and traps <= {os.path.abspath(f) for f in win.state.loaded.files},
            "trap files loaded",
        )
        self.run_and_wait(lambda: self.click_tool(win.act_run), "Run of every op")
        win.tree.expandAll()
        self.click_op("trap_inplace_no_mark_dirty")
        self.shot(
            "02_worst_verdict_tree.png",
            f"tree marks per op and file; status bar: {win.summary.text()!r}",
        )

    def item3_small(self) -> None:
        win = self.win
        self.click_op("round_ste")
        win.resize(1000, 700)
        self.wait(lambda: win.width() == 1000, "the window at 1000x700")
        self.click_tab(win.diagnostics)
        self.shot("03_small_window_1000x700.png", "1000x700, round_ste, Diagnostics tab")
        hbar = win.grid.horizontalScrollBar()
        hbar.setValue(hbar.maximum())
        self.shot(
            "03b_small_window_scrolled_right.png",
            f"1000x700, grid scrolled right (h bar {hbar.value()}/{hbar.maximum()})",
        )
        win.resize(1500, 950)
        self.wait(lambda: win.width() == 1500, "the window back at 1500x950")

    def item4_diagnostics(self) -> None:
        win = self.win
        self.click_op("trap_inplace_no_mark_dirty")
        self.click_tab(win.diagnostics)
        d = win.diagnostics
        self.click(d.only_selected)
        items = [d.list.topLevelItem(i) for i in range(d.list.topLevelItemCount())]
        shown = [it for it in items if not it.isHidden()]
        assert shown, "no diagnostics for the in-place trap"
        d.list.scrollToItem(shown[0])
        self.settle()
        self.click(d.list.viewport(), d.list.visualItemRect(shown[0]).center())
        self.shot(
            "04_diagnostics_detail.png",
            f"in-place trap, only the selected op ({len(shown)} of {len(items)} entries), "
            f"first entry clicked: detail pane; status {win.statusBar().currentMessage()!r}",
        )
        self.click(d.only_selected)

    def item5_running(self) -> None:
        win = self.win
        path = os.path.join(self.home, "slow_ops.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(SLOW_OPS)
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        win.open_files([path])  # as File > Open would
        self.wait(
            lambda: loaded and any(k[1] == path for k in win.state.loaded.ops), "slow_ops loaded"
        )
        win.settings_panel.timeout.setValue(60)
        self.click_op("SlowDouble")
        keys = [k for k in win.state.loaded.ops if k[1] == path]
        done = []
        win.runDone.connect(done.append)
        win.run(keys)  # this file's ops (its context menu's "Run this file's ops")
        self.wait(lambda: "running" in win.pair_label.text(), "SlowDouble running")
        start = time.monotonic()
        self.wait(lambda: time.monotonic() - start > 2.5, "a few seconds of running")
        self.shot(
            "05_running_elapsed_skip.png",
            f"SlowDouble running: header {win.pair_label.text()!r}; grid {win.grid.message()!r}",
        )
        self.click_tool(win.act_skip)
        self.wait(lambda: bool(done), "the queue to go on after Skip")
        win.runDone.disconnect(done.append)
        self.click_op("Double")
        self.shot("05b_skipped_queue_went_on.png", f"after Skip: status {win.summary.text()!r}")
        win.settings_panel.timeout.setValue(120)

    def item5_numeric_cancelled(self) -> None:
        """Cancel all while an op's numeric pass runs: its custom and default stay."""
        win = self.win
        path = os.path.join(self.home, "slow_numeric.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(SLOW_NUMERIC_OPS)
        loaded = []
        win.catalogsLoaded.connect(lambda: loaded.append(1))
        win.open_files([path])
        self.wait(
            lambda: loaded and any(k[1] == path for k in win.state.loaded.ops),
            "slow_numeric loaded",
        )
        self.click_op("SlowNumeric")
        key = next(k for k in win.state.loaded.ops if k[1] == path)
        done = []
        win.runDone.connect(done.append)
        win.run([key])
        self.wait(
            lambda: (
                win.state.results.stage(key) == "partial"
                and win.state.in_flight() == [key]
                and "x" in win.grid.rows
            ),
            "SlowNumeric's numeric pass",
        )
        self.click_tool(win.act_cancel)  # (Esc needs an active window: none under xvfb)
        self.wait(lambda: bool(done), "the run cancelled")
        win.runDone.disconnect(done.append)
        cell = next(c for c in win.grid.rows["x"].cells if c.mode == "numeric")
        self.shot(
            "05c_numeric_cancelled.png",
            f"Cancel all during SlowNumeric's numeric pass: mark {win.tree.shown_mark(key)[0]!r}, "
            f"numeric cell {cell.message!r}, status {win.summary.text()!r}",
        )

    def item5_numeric_failed(self) -> None:
        """The numeric pass runs past the op's timeout: custom and default stay, the op fails."""
        win = self.win
        path = os.path.join(self.home, "slow_numeric.py")
        key = next(k for k in win.state.loaded.ops if k[1] == path)
        self.click_op("SlowNumeric")
        win.settings_panel.timeout.setValue(3)
        done = []
        win.runDone.connect(done.append)
        win.run([key])
        self.wait(lambda: bool(done), "SlowNumeric's numeric pass timed out")
        win.runDone.disconnect(done.append)
        win.settings_panel.timeout.setValue(120)
        cell = next(c for c in win.grid.rows["x"].cells if c.mode == "numeric")
        self.shot(
            "05d_numeric_failed.png",
            f"SlowNumeric's numeric pass past a 3 s timeout: mark {win.tree.shown_mark(key)[0]!r}, "
            f"numeric cell {cell.message!r}, status {win.summary.text()!r}",
        )

    def item6_plots(self) -> None:
        win = self.win
        self.click_op("round_ste")
        pick = {a.text(): a for a in win.view_menu.actions()}
        pick["All rows: Difference (custom − default, custom − numeric)"].trigger()
        self.shot("06_plots_difference_view.png", "round_ste, View > All rows: Difference")
        pick["All rows: Gradient vs input"].trigger()
        self.shot("06b_plots_vs_input_dots.png", "round_ste, View > All rows: Gradient vs input")
        pick["All rows: Values by index"].trigger()

    def item6_heatmap_big(self) -> None:
        """A 2-D run (heatmap, colour bar) and a 10^6-element run (tick labels)."""
        win = self.win
        self.click_op("round_ste")
        sp = win.settings_panel
        keys = win.state.loaded.keys_of("round_ste")
        sp.shape.setText("20x30")
        self.run_and_wait(lambda: win.run(keys), "round_ste at 20x30")
        win.grid.set_view("x", "heatmap")
        self.shot("06c_plots_heatmap.png", "round_ste at 20x30, row x as heatmap")
        sp.shape.setText("1000000")
        sp.modes["numeric"].setChecked(False)
        self.run_and_wait(lambda: win.run(keys), "round_ste at 10^6")
        self.shot("06d_plots_million.png", "round_ste at 10^6 elements, numeric off: tick labels")
        sp.shape.setText("200")
        sp.modes["numeric"].setChecked(True)
        self.run_and_wait(lambda: win.run(keys), "round_ste at 200 again")

    def item7_shape(self) -> None:
        self.click_op("trap_wrong_grad_shape")
        self.shot("07_shape_note.png", "trap_wrong_grad_shape (TF): the cell says the shapes")

    def item8_numbers(self) -> None:
        win = self.win
        self.click_op("round_ste")
        self.click_tab(win.numbers)
        middle = win.tabs.parent()
        middle.setSizes([430, 470])  # the user drags the splitter up
        self.shot("08_numbers_table.png", "round_ste Numbers tab with parity rows")
        header = win.numbers.table.horizontalHeader()
        menu = win.numbers.chooser.menu()  # what a right-click on the header opens
        menu.popup(header.mapToGlobal(header.rect().center()))
        self.wait(menu.isVisible, "the columns menu")
        self.shot(
            "08b_numbers_columns_menu.png",
            "right-click on the Numbers header: the columns",
            screen=True,
        )
        menu.close()
        middle.setSizes([640, 260])

    def item9_traps(self) -> None:
        self.click_op("trap_inplace_no_mark_dirty")
        self.shot("09_trap_verdicts.png", "trap_inplace_no_mark_dirty: verdict error, GV605")
        self.click_op("trap_detached_forward")
        self.shot("09b_trap_detached_forward.png", "trap_detached_forward: surrogate, GV501")

    def item10_export(self) -> None:
        from gradviz.qt import export_actions as E

        win = self.win
        path = os.path.join(self.home, "run.json")
        E.export_json(win, E._run_results(win.exports), path=path)
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        graphs = {
            f"{op['name']} ({op['framework']})": op["settings"]["graph"] for op in report["ops"]
        }
        stack = sorted(k for k, g in graphs.items() if g == "stack")
        self.notes.append(
            f"10 (no image): JSON of the whole run: {len(report['ops'])} ops, each "
            f"with its own settings; graph stack for {stack}, op for the other "
            f"{len(graphs) - len(stack)}; top-level settings {report['settings']}"
        )
        print(self.notes[-1], flush=True)

    def item11_filter_readout_log(self) -> None:
        from PySide6.QtTest import QTest

        win = self.win
        self.click_op("round_ste")
        self.click(win.op_filter)
        QTest.keyClicks(win.op_filter, "round")
        self.settle()
        win.act_log_scale.trigger()  # View > Log scale
        row = win.grid.rows["x"]
        cell = next(c for c in row.cells if (c.framework, c.mode) == ("torch", "custom"))
        self.settle(10)  # the log axes laid out
        QTest.mouseMove(row.canvas.viewport(), self.plot_point(row, cell, 57.3, 0.0))
        self.wait(lambda: bool(row.readout.text), "the hover readout")
        self.shot(
            "11_filter_readout_log.png",
            f"filter 'round', View > Log scale, hover readout {row.readout.text!r}",
        )
        win.act_log_scale.trigger()
        win.op_filter.clear()
        win.settings_panel.seed.setValue(win.settings_panel.seed.value() + 1)
        self.wait(
            lambda: (
                "stale" in win.pair_label.text()
                or "stale" in win.tree.shown_mark(win.state.loaded.keys_of("round_ste")[0])[2]
            ),
            "the stale mark",
        )
        self.shot("11b_stale_mark.png", "seed changed after the run: stale marks")
        win.act_reset_settings.trigger()
        self.shot(
            "11c_reset_settings.png", f"Run > Reset settings to defaults: {win.summary.text()!r}"
        )

    def item11_dark_readout(self) -> None:
        """View > Theme: dark with the hover readout over a plot, then back to the desktop's."""
        from PySide6.QtTest import QTest

        win = self.win
        self.click_op("round_ste")
        win.theme_actions["dark"].trigger()
        self.wait(lambda: win.plot_scheme == "dark", "the dark scheme")
        row = win.grid.rows["out"]
        cell = next(c for c in row.cells if (c.framework, c.mode) == ("tf", "custom"))
        self.settle(10)
        QTest.mouseMove(row.canvas.viewport(), self.plot_point(row, cell, 150.2, 1.0))
        self.wait(lambda: bool(row.readout.text), "the hover readout in dark")
        self.shot("11d_dark_readout.png", f"View > Theme: dark, hover readout {row.readout.text!r}")
        win.theme_actions["follow desktop"].trigger()
        self.wait(lambda: win.plot_scheme == "light", "the light scheme again")

    def item1_stack_scroll(self) -> None:
        """Many tensors (the stack graph): the wheel over a plot scrolls the grid."""
        win = self.win
        self.click_op("round_ste")
        sp = win.settings_panel
        sp.graph.setCurrentIndex(sp.graph.findText("stack"))
        self.run_and_wait(lambda: win.run(win.state.loaded.keys_of("round_ste")), "a stack run")
        grid = win.grid
        row = next(iter(grid.rows.values()))
        cell = next(c for c in row.cells if c.has_data)
        bar = grid.verticalScrollBar()
        self.wheel(row.canvas.viewport(), self.plot_point(row, cell), clicks=3)
        self.shot(
            "01b_wheel_scroll_stack.png",
            f"round_ste, stack graph ({len(grid.rows)} tensors): three wheel turns over a "
            f"plot scrolled the grid to {bar.value()}/{bar.maximum()}",
        )
        win.act_reset_settings.trigger()

    def readme_shot(self, path: str) -> None:
        """docs/screenshot.png: the first launch with round_ste shown (verdicts, a framework
        without a gradient, parity), in full colour."""
        self.click_op("round_ste")
        self.settle(10)
        if not self.win.grab().save(path, "PNG", 9):
            raise OSError(f"could not write {path}")
        print(f"wrote {path}", flush=True)

    def close(self) -> None:
        self.win.close()
        self.settle()


def only(names: str | None, *steps):
    """The steps named in `names` ("a,b"), in walk order; every step when None."""
    if names is None:
        return steps
    want = [n.strip() for n in names.split(",") if n.strip()]
    known = {s.__name__ for s in steps}
    unknown = [n for n in want if n not in known]
    if unknown:
        raise SystemExit(f"--only: no step {', '.join(unknown)} (steps: {', '.join(known)})")
    return [s for s in steps if s.__name__ in want]


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "docs", "walkthrough"))
    ap.add_argument("--readme", metavar="PNG", help="also save the README screenshot here")
    ap.add_argument(
        "--only",
        metavar="STEPS",
        help="retake these steps' shots only, comma-separated (e.g. item1_stack_scroll)",
    )
    args = ap.parse_args(argv)
    home = tempfile.mkdtemp(prefix="gradviz-walk-")
    os.environ["HOME"] = home  # no saved settings play a part
    os.environ["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    os.makedirs(args.out, exist_ok=True)
    walk = Walk(args.out, home)
    try:
        walk.start()
        if args.readme:
            walk.readme_shot(args.readme)
        for step in only(
            args.only,
            walk.item1_wheel,
            walk.item2_tree,
            walk.item3_small,
            walk.item4_diagnostics,
            walk.item5_running,
            walk.item5_numeric_cancelled,
            walk.item5_numeric_failed,
            walk.item6_plots,
            walk.item6_heatmap_big,
            walk.item7_shape,
            walk.item8_numbers,
            walk.item9_traps,
            walk.item11_filter_readout_log,
            walk.item11_dark_readout,
            walk.item1_stack_scroll,
            walk.item10_export,
        ):
            step()
        walk.close()
        return 0
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
