"""The app's state, the one place run state lives: the loaded files and their pairs, results by
op, the running batch, a run asked for while one goes on (pending), files to re-run when they
are reloaded. The window sends it commands (what the user and the engine did) and renders what
it reports to its observers:

  "files"         ()                       files, ops, pairs or load errors changed
  "file_removed"  (file)
  "run_started"   (requests)
  "progress"      (key)                    an op's state changed (self.progress.states[key])
  "result"        (key, Analysis)          a partial or final result, analysed
  "checks"        (key, RunResult)         an op's contract checks
  "run_finished"  (results)

Each op's last few final results stay in self.history (gradviz.app.history), for before/after.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from gradviz.app.history import PastRun, RunHistory, source_sha1
from gradviz.app.loaded import LoadedFiles
from gradviz.app.observers import Observers
from gradviz.app.progress import CANCELLED, ERROR, OK, QUEUED, RUNNING, RunProgress, final_state
from gradviz.app.results import FINAL, PARTIAL, Results, request_key
from gradviz.compare import VERDICTS
from gradviz.model import OpKey, RunRequest, RunResult, RunSettings
from gradviz.verdict import PASSING, Verdict
from gradviz.vocab import CheckStatus, ErrorKind

if TYPE_CHECKING:  # analysis (numpy curves) is imported by whoever analyses, not at start
    from gradviz.app.analysis import Analysis

# the op tree's marks, least to most worrying: the verdicts in compare's order, a failed run last
MARK_ORDER = ("", CANCELLED, OK) + tuple(VERDICTS)
# marks that say an op was checked and passed: a file's cancelled op outranks these (it was not
# checked, so the file must not show a pass), while a real problem still outranks a cancel
PASSING_MARKS = (OK, *PASSING, Verdict.NO_GRADIENT)


class AppState:
    def __init__(self, files: Iterable[str] = (), module_names=None) -> None:
        self.loaded = LoadedFiles(files, module_names)
        self.results = Results()
        self.progress = RunProgress()
        self.events = Observers()
        self.loading = 0  # file loads under way
        self.running = False
        self.run_when_loaded = False  # run every checked op once the files are in
        self.pending: list | None = None  # keys asked for while a batch ran (latest wins)
        self.rerun_files: set[str] = set()  # changed on disk: re-run their ops once reloaded
        self.last_batch: list[RunResult] = []
        self.settings: dict[
            str, RunSettings
        ] = {}  # the settings a run would use now, per framework
        self.history = RunHistory()
        self.run_number = 0  # of the batch going on or last run
        self._started_source: dict[tuple, str] = {}  # sha1 of each op's file as its run started

    def subscribe(self, event: str, listener: Callable) -> Callable[[], None]:
        return self.events.subscribe(event, listener)

    # --- files ---------------------------------------------------------------------------------
    def open(self, paths: Iterable[str], module_names=None) -> list[str]:
        """Add files ({file: dotted name} for those opened by name); returns those not loaded
        before (to be loaded)."""
        before = dict(self.loaded.module_names)
        new = self.loaded.add(paths, module_names)
        if new or self.loaded.module_names != before:
            self.events.emit("files")
        return new

    def loading_started(self) -> None:
        self.loading += 1

    def catalogs_arrived(self, catalogs, files) -> tuple[list | None, bool]:
        """The answer of a load. Returns (keys to run now or None, whether that is the first
        run asked for at start)."""
        self.loading = max(0, self.loading - 1)
        self.loaded.set_catalogs(list(catalogs), files)
        self.events.emit("files")
        files = {os.path.abspath(f) for f in files}
        rerun = [k for k in self.loaded.checked_keys() if k[1] in self.rerun_files & files]
        self.rerun_files -= files
        if self.run_when_loaded and self.loading == 0:
            self.run_when_loaded = False
            return self.loaded.checked_keys(), True
        return (rerun or None), False

    def files_changed(self, files: Iterable[str]) -> None:
        self.rerun_files.update(os.path.abspath(f) for f in files)

    def remove_file(self, file: str) -> None:
        file = os.path.abspath(file)
        self.loaded.remove(file)
        self.results.forget_file(file)
        self.history.forget_file(file)
        self.rerun_files.discard(file)
        self.events.emit("file_removed", file)
        self.events.emit("files")

    # --- runs ----------------------------------------------------------------------------------
    def requests(self, keys, settings_for: Callable[[str], RunSettings]) -> list[RunRequest]:
        return [RunRequest(file, qualname, fw, settings_for(fw)) for fw, file, qualname in keys]

    def defer(self, keys) -> None:
        """A run asked for while one goes on: it starts when that one ends (the latest wins)."""
        self.pending = list(keys)

    def run_started(self, requests: list[RunRequest]) -> None:
        self.running = True
        self.run_number += 1
        sources = {f: source_sha1(f) for f in {r.file for r in requests}}
        self._started_source.update((request_key(r), sources[r.file]) for r in requests)
        self.results.asked(requests)
        self.progress.begin(request_key(r) for r in requests)
        self.events.emit("run_started", requests)
        for r in requests:
            self.events.emit("progress", request_key(r))

    def op_started(self, request: RunRequest) -> None:
        key = request_key(request)
        self.progress.running(key, restart=True)
        self.events.emit("progress", key)

    def arrived(self, analysis: Analysis) -> tuple:
        """A result, analysed: stored, and its op's progress moves on (a partial one keeps
        running: its numeric pass is still going). An op cancelled while still queued keeps its
        earlier result: Cancel all during Run all wiped every queued op's last verdict. One
        cancelled in its numeric pass comes back with custom and default (the engine keeps its
        quick pass: RunResult.numeric_cancelled) and is marked cancelled, not by its verdicts."""
        res = analysis.result
        key = request_key(res.request)
        earlier = self.results.get(key)
        if (
            earlier is not None
            and not res.partial
            and not res.tensors
            and final_state(res) == CANCELLED
            and self.progress.states.get(key) == QUEUED
        ):
            self.results.keep(key, earlier)
            self.progress.returned(key, FINAL)
            self.progress.finished(key, final_state(earlier.result))
            self.events.emit("progress", key)
            self.events.emit("result", key, earlier)
            return key
        key = self.results.put(analysis)
        self.progress.returned(key, PARTIAL if analysis.result.partial else FINAL)
        if analysis.result.partial:
            self.progress.running(key)
        else:
            self.progress.finished(key, final_state(analysis.result))
            self._remember(key)
        self.events.emit("progress", key)
        self.events.emit("result", key, self.results.get(key))
        return key

    def _remember(self, key) -> None:
        """A final result into the op's history, unless cancelled (nothing was checked)."""
        a = self.results.get(key)
        if a is None or final_state(a.result) == CANCELLED:
            return
        self.history.add(
            key,
            PastRun(
                self.run_number,
                time.time(),
                a.result.request.settings,
                self._started_source.get(key, ""),
                a,
                self.op_mark(key),
            ),
        )

    def checks_arrived(self, result: RunResult) -> None:
        key = self.results.add_checks(result) or request_key(result.request)
        runs = self.history.runs(key)
        if runs and runs[0].number == self.run_number:
            self.history.remark(key, self.op_mark(key))  # a failed check changes the mark
        self.events.emit("checks", key, result)
        self.events.emit("progress", key)  # a failed check changes the op's mark

    def run_finished(self, results: list[RunResult]) -> list | None:
        """The batch ended; returns the keys of a run asked for meanwhile, to start now."""
        self.running = False
        self.last_batch = list(results)
        self.events.emit("run_finished", self.last_batch)
        keys, self.pending = self.pending, None
        return keys

    def cancel(self) -> None:
        self.pending = None

    # --- what the views read -------------------------------------------------------------------
    def pairing(self, requests) -> dict:
        """{OpKey: (pair name, the pair's final analyses not asked again)} of a batch's
        requests: what each pair's parity compares once the batch's own results are in."""
        keys = {OpKey.of_request(r) for r in requests}
        out = {}
        for key in keys:
            pair = self.loaded.pair_name(key)
            held = [self.results.get(k) for k in self.loaded.keys_of(pair) if k not in keys]
            out[key] = (pair, tuple(a for a in held if a is not None and not a.result.partial))
        return out

    def pair_analyses(self, pair: str) -> dict[str, Analysis]:
        out = {}
        for fw, op in self.loaded.pairs().get(pair, {}).items():
            a = self.results.get(OpKey.of_op(op))
            if a is not None:
                out[fw] = a
        return out

    def op_mark(self, key) -> str:
        """What the op tree shows for an op: "queued" or "running" while it runs, then the worst
        verdict of its tensors ("error" when it failed, "cancelled"), "" before any run. An op
        that did not raise but whose gradient differs is "differs", never a plain ok."""
        state = self.progress.states.get(key, "")
        if state in ("", QUEUED, RUNNING, CANCELLED):
            return state
        a = self.results.get(key)
        if a is None or a.result.partial:
            return state
        if a.comparison is None or a.result.numeric_failed:  # the comparison itself failed,
            return ERROR  # or numeric did: custom was not checked
        verdicts = [t.verdict for t in a.comparison.tensors]
        if a.result.status != "ok":
            return ERROR
        # no tensor came back (only the default mode ran, and its override could not be
        # removed): nothing was checked, which a tick would claim
        worst = max(verdicts, key=MARK_ORDER.index) if verdicts else Verdict.UNCHECKED
        # the worst verdict of an op, its checks included (DESIGN): a failed contract check is
        # a gradient training would get wrong, as --strict counts it
        if self.failed_checks(key) and MARK_ORDER.index(worst) < MARK_ORDER.index(Verdict.DIFFERS):
            return Verdict.DIFFERS
        return worst

    def failed_checks(self, key) -> list[str]:
        """The contract checks the op's last result failed, by name."""
        res = self.results.result(key)
        return (
            [c.name for c in res.checks if c.status == CheckStatus.FAIL] if res is not None else []
        )

    def op_warning(self, key) -> tuple[str, tuple]:
        """The most severe error or warning finding of the op's last final result, and the codes
        of that severity: ("error", ("GV603-call-returns-grad-fn",)), or ("", ()). A verdict
        can be match while a finding says the custom gradient was never used (the tree shows
        both, rather than a plain green tick)."""
        a = self.results.get(key)
        if a is None or a.result.partial:
            return "", ()
        for severity in ("error", "warning"):
            codes = tuple(f.code for f in a.findings if f.severity == severity)
            if codes:
                return severity, codes
        return "", ()

    def file_mark(self, file: str) -> str:
        """The worst mark of a file's ops ("running" while any runs; "error" if it did not load);
        "cancelled" rather than a pass when an op was cancelled and the others passed."""
        if file in self.loaded.errors:
            return ERROR
        marks = [self.op_mark(k) for k in self.loaded.ops if k[1] == file]
        if any(m in (QUEUED, RUNNING) for m in marks):
            return RUNNING
        worst = max(marks, key=MARK_ORDER.index, default="")
        return CANCELLED if worst in PASSING_MARKS and CANCELLED in marks else worst

    def settings_changed(self, settings: dict) -> None:
        """The settings a run would use now ({framework: RunSettings}; a framework whose
        settings do not parse is left out): results made with others are stale."""
        self.settings = dict(settings)
        self.events.emit("stale")

    def is_stale(self, key) -> bool:
        """Whether the op's result was made with other settings than a run would use now, among
        those that change a result: not the timeout of an op that finished within it, nor the
        depth of a graph that is not the stack (RunSettings: ignored by the others)."""
        asked = self.results.asked_for(key)
        now = self.settings.get(key[0])
        if key not in self.results or asked is None or now is None:
            return False
        was = asked.settings
        result = self.results.result(key)
        timed_out = (
            result is not None
            and result.error is not None
            and result.error.kind == ErrorKind.TIMEOUT
        )
        if not timed_out:
            now = now.with_(timeout=was.timeout)
        if was.graph != "stack" and now.graph != "stack":
            now = now.with_(depth=was.depth)
        return was != now

    def in_flight(self, pair: str | None = None) -> list:
        """Ops a worker runs now (one per framework at most), of `pair` only when given."""
        return [
            k
            for k in self.progress.in_flight.values()
            if pair is None or self.loaded.pair_name(k) == pair
        ]

    def pair_in_step(self, pair: str) -> bool:
        """Whether every op of `pair` in the running batch has a result of this batch at the
        same stage (both partial or both final): then they can be drawn together at once. An
        op whose result has not come back yet is not in step (its previous run's result does
        not count): the window waits a moment for it rather than drawing twice."""
        keys = [k for k in self.progress.keys if self.loaded.pair_name(k) == pair]
        return len({self.progress.stage.get(k) for k in keys}) <= 1

    def summary(self, results: list[RunResult]) -> str:
        """One line for the status bar: tensors per verdict, failed and cancelled runs apart."""
        from gradviz.compare import summary_counts

        states = [final_state(r) for r in results]
        # a cancelled run is counted as cancelled, not as the "error" verdict of a failed one;
        # one whose numeric mode failed as failed, its tensors (not checked) not as match
        kept = [
            self.results.get(request_key(r.request))
            for r, st in zip(results, states)
            if st != CANCELLED and not r.numeric_failed
        ]
        comps = [a.comparison for a in kept if a is not None and a.comparison is not None]
        counts = {k: v for k, v in summary_counts(comps).items() if v}
        # ops and tensors said apart: "2 run(s): 2 match, 32 surrogate" read as a contradiction
        n = len(results)
        text = f"{n} op{'s' if n != 1 else ''} run"
        failed, cancelled = states.count(ERROR), states.count(CANCELLED)
        apart = ([f"{failed} failed"] if failed else []) + (
            [f"{cancelled} cancelled"] if cancelled else []
        )
        text += "".join(", " + a for a in apart)
        if counts:
            tensors = sum(counts.values())
            # short enough for the status bar of a 1000 px window
            text += f" — {tensors} tensor{'s' if tensors != 1 else ''}: " + ", ".join(
                f"{v} {k}" for k, v in counts.items()
            )
        return text


__all__ = ["AppState", "FINAL", "PARTIAL"]
