"""The window's runs: Run / Run selected / Skip / Cancel sent to the model and the bridge, the
status bar's progress bar, and what a run's results, checks and end do to the window."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QProgressBar

from gradviz.app.analysis import Analysis
from gradviz.app.problems import check_problems
from gradviz.app.results import request_key
from gradviz.app.shape_hint import shape_hint


class RunControl:
    """Runs of `state`'s ops through `bridge` with `settings_panel`'s settings; says how they go
    in `summary` (a label) and a progress bar it adds to `status_bar`; shows what they give in
    `tree`, `diagnostics`, `checks_matrix`, `log` and `pair_view` (turning to `tabs`'
    Diagnostics when the shown op failed); enables `act_run`, `act_cancel` and `act_skip` by
    whether one is going on; `on_done(results)` at the end of each batch."""

    def __init__(
        self,
        state,
        bridge,
        settings_panel,
        summary,
        status_bar,
        *,
        tree,
        diagnostics,
        checks_matrix,
        log,
        tabs,
        pair_view,
        act_run,
        act_cancel,
        act_skip,
        on_done: Callable[[list], None],
    ) -> None:
        self.state, self.bridge, self.settings_panel = state, bridge, settings_panel
        self.summary, self.tree, self.diagnostics = summary, tree, diagnostics
        self.checks_matrix, self.log, self.tabs, self.pair_view = (
            checks_matrix,
            log,
            tabs,
            pair_view,
        )
        self.act_run, self.act_cancel, self.act_skip = act_run, act_cancel, act_skip
        self.on_done = on_done
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.hide()
        status_bar.addPermanentWidget(self.progress_bar)

    def connect(self) -> None:
        b, s = self.bridge, self.state
        b.runFinished.connect(self.finished)
        b.parityReady.connect(self.parity_arrived)
        self.pair_view.pair_numbers.pending = b.parity_pending
        b.busyChanged.connect(self.busy)
        s.subscribe("progress", self.progress)
        s.subscribe("result", self.show_result)
        s.subscribe("checks", self.show_checks)
        self.settings_panel.changed.connect(self.settings_changed)

    def run(self, keys=None) -> bool:
        """Run `keys` ((framework, file, qualname)), default the checked ops. A run asked for while
        one is going on starts when it ends (the latest ask wins)."""
        state, panel = self.state, self.settings_panel
        problem = panel.validate()
        if problem:
            self.summary.setText(f"cannot run: {problem}")
            return False
        keys = list(keys) if keys is not None else state.loaded.checked_keys()
        if not keys:
            self.summary.setText("nothing to run: load a file and check some ops")
            return False
        if self.bridge.running:
            state.defer(keys)
            return True
        reqs = state.requests(keys, panel.settings)
        if not self.bridge.run(reqs, state.pairing(reqs)):
            return False
        for k in keys:
            self.diagnostics.clear_for(f"run:{k}")
        state.run_started(reqs)
        self.progress_bar.setRange(0, len(reqs))
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("%v / %m runs")
        self.progress_bar.show()
        self.summary.setText(f"running {len(reqs)} op run(s)…")
        # also for a run without checks: the rows of its ops must not show another run's cells
        self.checks_matrix.set_pending(
            [(k, f"{state.loaded.pair_name(k)} ({k[0]})") for k in state.progress.keys],
            reqs[0].settings.checks,
        )
        return True

    def run_current(self) -> None:
        pair = self.tree.current_pair()
        if pair:
            self.run(self.state.loaded.keys_of(pair))

    def cancel(self) -> None:
        self.state.cancel()
        self.bridge.cancel()
        self.summary.setText("cancelling…")

    def skip(self) -> None:
        """Skip the running op of the shown pair (else every running op): its worker is
        replaced, the rest of the queue goes on."""
        keys = self.state.in_flight(self.tree.current_pair()) or self.state.in_flight()
        if not keys:
            self.summary.setText("nothing running to skip")
            return
        self.bridge.skip(keys)
        self.summary.setText("skipping " + ", ".join(f"{k[2]} ({k[0]})" for k in keys) + "…")

    def settings_changed(self) -> None:
        """Tell the model what a run would use now: results made otherwise are marked stale."""
        now = {}
        for fw in self.bridge.frameworks:
            try:
                now[fw] = self.settings_panel.settings(fw)
            except ValueError:
                pass  # not parseable yet: nothing to compare with
        self.state.settings_changed(now)

    def reset_settings(self) -> None:
        self.settings_panel.reset_to_defaults()
        self.summary.setText("run settings reset to their defaults")

    def busy(self, busy: bool) -> None:
        self.act_run.setEnabled(not busy)
        self.act_cancel.setEnabled(busy)
        self.act_skip.setEnabled(busy)

    def parity_arrived(self, pair: str, analyses) -> None:
        """A pair's parity, made in the run task: the analyses hold it, Numbers shows it."""
        self.state.results.add_parity(analyses)
        self.pair_view.pair_numbers.arrived(pair, analyses)

    def show_result(self, key, analysis) -> None:
        res = analysis.result
        self.diagnostics.show_result(key, analysis)
        if not res.partial:
            self.progress_bar.setValue(self.state.progress.done)
            self.log.add(
                f"{res.name} ({res.framework}) on {res.device or res.request.settings.device}",
                res.log,
            )
        self.pair_view.schedule(key)

    def progress(self, key) -> None:
        """An op of the shown pair started or ended with nothing drawn yet: say so in the grid."""
        pair = self.tree.current_pair()
        if (
            pair is not None
            and self.state.loaded.pair_name(key) == pair
            and not self.state.pair_analyses(pair)
        ):
            self.pair_view.show(pair)

    def show_checks(self, key, res) -> None:
        """An op's contract checks, after every plain result of the batch is in."""
        label = f"{res.name} ({res.framework})"
        self.checks_matrix.set_checks(key, label, res.checks)
        held = self.state.results.get(key)  # its analysis, the checks' findings in it
        if held is None:  # no result held for it: its checks alone
            from gradviz.diagnostics import with_check_findings

            held = Analysis(res, findings=tuple(with_check_findings((), res)))
        for p in check_problems(key, held):
            self.diagnostics.add_problem(p, f"run:{key}")
        self.summary.setText(f"contract checks: {label} done")

    def finished(self, results) -> None:
        state = self.state
        self.progress_bar.hide()
        self.checks_matrix.finish_run(results)  # checks the run never reached say why
        pending = state.run_finished(results)
        text = state.summary(results)
        hint = shape_hint(results)
        if hint:  # the saved shape, not the op, may be what broke it: said where one looks
            text += " — " + hint
            self.log.add("run", hint)
        self.summary.setText(text)
        self.summary.setToolTip(
            text + ("\nfailed runs: see Diagnostics" if " failed" in text else "")
        )
        shown = self.tree.current_pair()
        loaded = state.loaded
        if any(
            r.status != "ok" and loaded.pair_name(request_key(r.request)) == shown for r in results
        ):
            self.tabs.setCurrentWidget(self.diagnostics)
        if shown is None and results:
            self.tree.select_pair(loaded.pair_name(request_key(results[0].request)))
        self.pair_view.refresh()
        self.pair_view.pair_numbers.again()
        self.on_done(list(results))
        if pending is not None:
            self.run(pending)
