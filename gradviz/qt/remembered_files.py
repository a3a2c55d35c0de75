"""The window's open files kept in the settings (`files/open`, gradviz.app.open_list) so that the
next plain `gradviz` brings them back; and the saved files that could not be found, listed in
Diagnostics (until opened again) and the log; the status bar says so until the load begins.
Only a window opened from the saved list (or the built-in examples) remembers: files given on
the command line are a one-off look and leave the saved list alone."""

from __future__ import annotations

from gradviz.app.open_list import Restored, entries_of, restore, saved_entries
from gradviz.app.settings_schema import Key


def read_saved(qsettings) -> Restored | None:
    """The files of the saved list, or None when there is no list (a fresh or older config)."""
    if not qsettings.contains(Key.OPEN):
        return None
    entries = saved_entries(qsettings.value(Key.OPEN))
    return None if entries is None else restore(entries)


class RememberedFiles:
    """Writes the open files to the settings whenever they change (a removed file leaves the
    list at once), and reports the saved ones that were left out until they are opened again."""

    def __init__(self, qs, state, restored: Restored, *, diagnostics, log, summary, tabs) -> None:
        """The list goes to `qs` as `state`'s files change; the saved files `restored` left out
        are said in `diagnostics` (shown in `tabs`), `log` and `summary`."""
        self.qs, self.state, self.diagnostics = qs, state, diagnostics
        self._saved: list[str] | None = None
        self._missing: dict[str, str] = {}  # entry -> its diagnostics tag
        lines = restored.missing_lines()
        for i, ((entry, _why), line) in enumerate(zip(restored.missing, lines)):
            tag = f"missing:{i}:"  # clear_for matches a prefix: unique per entry
            self._missing[entry] = tag
            diagnostics.add(
                "warning",
                "open files",
                line,
                key=tag,
                detail="It was in the list of open files saved by the last "
                "launch; it is left out of this launch and of the list.",
            )
        if lines:
            log.add("files", "saved open files left out: " + "; ".join(lines))
            summary.setText(
                f"{len(lines)} saved file(s) missing (see Diagnostics): " + "; ".join(lines)
            )
            tabs.setCurrentWidget(diagnostics)
        state.subscribe("files", self.save)
        self.save()

    def save(self) -> None:
        loaded = self.state.loaded
        entries = entries_of(loaded)
        if entries == self._saved:
            return
        self.qs.setValue(Key.OPEN, entries)
        self._saved = entries
        for entry in [e for e in self._missing if e in entries]:  # opened again: not missing
            self.diagnostics.clear_for(self._missing.pop(entry))
