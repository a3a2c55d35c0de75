"""The window's runs: Run / Run selected / Skip / Cancel sent to the model and the bridge, the
status bar's progress bar, and what a run's results, checks and end do to the window."""
from __future__ import annotations

from PySide6.QtWidgets import QProgressBar

from gradviz.app.results import request_key
from gradviz.qt.checks_matrix import contract_findings


class RunControl:
    def __init__(self, win) -> None:
        self.win = win
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.hide()
        win.statusBar().addPermanentWidget(self.progress_bar)

    def connect(self) -> None:
        win, b, s = self.win, self.win.bridge, self.win.state
        b.runFinished.connect(self.finished)
        b.busyChanged.connect(self.busy)
        s.subscribe("progress", self.progress)
        s.subscribe("result", self.show_result)
        s.subscribe("checks", self.show_checks)
        win.settings_panel.changed.connect(self.settings_changed)

    def run(self, keys=None) -> bool:
        """Run `keys` ((framework, file, qualname)), default the checked ops. A run asked for while
        one is going on starts when it ends (the latest ask wins)."""
        win, state = self.win, self.win.state
        problem = win.settings_panel.validate()
        if problem:
            win.summary.setText(f"cannot run: {problem}")
            return False
        keys = list(keys) if keys is not None else state.loaded.checked_keys()
        if not keys:
            win.summary.setText("nothing to run: load a file and check some ops")
            return False
        if win.bridge.running:
            state.defer(keys)
            return True
        reqs = state.requests(keys, win.settings_panel.settings)
        if not win.bridge.run(reqs):
            return False
        for k in keys:
            win.diagnostics.clear_for(f"run:{k}")
        state.run_started(reqs)
        self.progress_bar.setRange(0, len(reqs))
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("%v / %m runs")
        self.progress_bar.show()
        win.summary.setText(f"running {len(reqs)} op run(s)…")
        # also for a run without checks: the rows of its ops must not show another run's cells
        win.checks_matrix.set_pending(
            [(k, f"{state.loaded.pair_name(k)} ({k[0]})") for k in state.progress.keys],
            reqs[0].settings.checks)
        return True

    def run_current(self) -> None:
        pair = self.win.tree.current_pair()
        if pair:
            self.win.run(self.win.state.loaded.keys_of(pair))

    def cancel(self) -> None:
        self.win.state.cancel()
        self.win.bridge.cancel()
        self.win.summary.setText("cancelling…")

    def skip(self) -> None:
        """Skip the running op of the shown pair (else every running op): its worker is
        replaced, the rest of the queue goes on."""
        win = self.win
        keys = win.state.in_flight(win.tree.current_pair()) or win.state.in_flight()
        if not keys:
            win.summary.setText("nothing running to skip")
            return
        win.bridge.skip(keys)
        win.summary.setText("skipping " + ", ".join(f"{k[2]} ({k[0]})" for k in keys) + "…")

    def settings_changed(self) -> None:
        """Tell the model what a run would use now: results made otherwise are marked stale."""
        now = {}
        for fw in self.win.bridge.frameworks:
            try:
                now[fw] = self.win.settings_panel.settings(fw)
            except ValueError:
                pass                            # not parseable yet: nothing to compare with
        self.win.state.settings_changed(now)

    def reset_settings(self) -> None:
        self.win.settings_panel.reset_to_defaults()
        self.win.summary.setText("run settings reset to their defaults")

    def busy(self, busy: bool) -> None:
        self.win.act_run.setEnabled(not busy)
        self.win.act_cancel.setEnabled(busy)
        self.win.act_skip.setEnabled(busy)

    def show_result(self, key, analysis) -> None:
        win, res = self.win, analysis.result
        win.diagnostics.show_result(key, analysis)
        if not res.partial:
            self.progress_bar.setValue(win.state.progress.done)
            win.log.add(f"{res.name} ({res.framework}) on {res.device or res.request.settings.device}",
                        res.log)
        win.pair_view.schedule(key)

    def progress(self, key) -> None:
        """An op of the shown pair started or ended with nothing drawn yet: say so in the grid."""
        win = self.win
        pair = win.tree.current_pair()
        if pair is not None and win.state.loaded.pair_name(key) == pair and \
                not win.state.pair_analyses(pair):
            win.show_pair(pair)

    def show_checks(self, key, res) -> None:
        """An op's contract checks, after every plain result of the batch is in."""
        win = self.win
        label = f"{res.name} ({res.framework})"
        win.checks_matrix.set_checks(key, label, res.checks)
        for f in contract_findings(res):
            win.diagnostics.add_finding(label, f, key=f"run:{key}", run_key=key)
        win.summary.setText(f"contract checks: {label} done")

    def finished(self, results) -> None:
        win = self.win
        self.progress_bar.hide()
        win.checks_matrix.finish_run(results)   # checks the run never reached say why
        pending = win.state.run_finished(results)
        text = win.state.summary(results)
        win.summary.setText(text)
        win.summary.setToolTip(text + ("\nfailed runs: see Diagnostics" if " failed" in text else ""))
        shown = win.tree.current_pair()
        loaded = win.state.loaded
        if any(r.status != "ok" and loaded.pair_name(request_key(r.request)) == shown
               for r in results):
            win.tabs.setCurrentWidget(win.diagnostics)
        if shown is None and results:
            win.tree.select_pair(loaded.pair_name(request_key(results[0].request)))
        win.refresh_view()
        win.runDone.emit(list(results))
        if pending is not None:
            win.run(pending)
