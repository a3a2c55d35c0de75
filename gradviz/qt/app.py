"""`gradviz [FILES] [--run] [--screenshot PNG]`: show the window first, then start the workers.

Order matters for a window that is there at once: QApplication and the window are created and
painted before the engine spawns its workers (torch/tensorflow import in those processes only) and
before pyqtgraph is imported (the empty grid needs none of it; qt/first_paint.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

SCRIPTED_TIMEOUT_S = 600.0  # --run --screenshot gives up (exit 3) if the run never ends


def first_launch(qsettings, files_given: bool) -> bool:
    """True on the very first `gradviz` without files: no saved settings at all. A new user then
    sees the built-in examples already run (as --run does); from then on the key is saved and
    later launches wait for Run, with the settings the user left."""
    from gradviz.app.settings_schema import Key

    first = not files_given and not qsettings.allKeys()
    qsettings.setValue(Key.LAUNCHED, True)  # set on every launch
    qsettings.sync()
    return first


def open_window(argv_files: Sequence[str] = (), run: bool = False, engine=None, qsettings=None):
    """The main window for these files (none: the files open when gradviz last closed, else the
    built-in examples), and whether to run them once loaded: as asked, or because this is the
    first launch."""
    from gradviz.app.settings_file import SettingsFile
    from gradviz.catalog import builtin_examples
    from gradviz.qt.main_window import MainWindow

    qsettings = qsettings if qsettings is not None else SettingsFile()
    first = first_launch(qsettings, bool(argv_files))
    # files on the command line win for this launch and leave the saved list alone; else the
    # files open when gradviz last closed, or the built-in examples (traps: Help menu)
    win = MainWindow(
        list(argv_files) or builtin_examples(),
        engine=engine,
        qsettings=qsettings,
        remember_files=not argv_files,
    )
    if first:
        win.log.note(
            "first launch: the built-in examples run once by themselves; "
            "from now on press ▶ Run (Ctrl+R)"
        )
    return win, run or first


def main(
    argv_files: Sequence[str] = (), run: bool = False, screenshot: str | None = None, engine=None
) -> int:
    """Run the desktop app; returns the process exit code. With `screenshot`, the window image (1500x950) is
    saved once the files are loaded (and, with `run`, once the run is done) and the app exits:
    0 when the image was written, 3 when not (or on timeout). GRADVIZ_SETTINGS=path.ini keeps
    the settings in that file instead of the user's (gradviz's own text format, never QSettings)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("gradviz")
    app.setOrganizationName("gradviz")
    import gradviz
    from gradviz.qt.about import app_icon

    app.setApplicationVersion(gradviz.__version__)
    app.setWindowIcon(app_icon())  # window and taskbar
    app.setDesktopFileName("gradviz")  # ties the window to gradviz.desktop (Wayland)
    win, run = open_window(argv_files, run, engine)  # settings: app/settings_file.default_path
    if screenshot:
        win.resize(1500, 950)  # the same picture whatever size was saved

    def after_shown():
        win.start(run=run)  # the workers import their frameworks meanwhile
        if screenshot and not win.state.loaded.files:
            # nothing to load (every saved file is missing): no load or run will end to wait for
            QTimer.singleShot(0, shoot)
        from gradviz.qt.grid.view import import_plots

        import_plots()  # pyqtgraph now, not when the first result comes

    from gradviz.qt.first_paint import after_first_paint

    after_first_paint(win, after_shown)  # the window is up before any worker is spawned
    win.show()
    exit_code = {"code": 0}

    if screenshot:

        def shoot(*_):
            # let the layout settle and the plots paint before grabbing
            def grab():
                ok = win.save_screenshot(screenshot) and os.path.getsize(screenshot) > 0
                if not ok:
                    print(f"gradviz: could not write {screenshot}", file=sys.stderr)
                exit_code["code"] = 0 if ok else 3
                win.close()
                app.exit(exit_code["code"])

            QTimer.singleShot(300, grab)

        if run:
            win.runDone.connect(shoot)
        else:
            win.catalogsLoaded.connect(shoot)

        def give_up():
            print(
                "gradviz: timed out waiting for the run; saving the window as it is",
                file=sys.stderr,
            )
            win.save_screenshot(screenshot)
            win.close()
            app.exit(3)

        QTimer.singleShot(int(SCRIPTED_TIMEOUT_S * 1000), give_up)

    stopped = _close_on_stop_signals(app, win)
    code = app.exec()
    _delete_now(win)
    if stopped:
        return 128 + stopped[0]
    return exit_code["code"] if screenshot else code


def _close_on_stop_signals(app, win) -> list[int]:
    """Ctrl+C (it printed a traceback and the window stayed), SIGTERM and SIGHUP close the window
    as its close button does (settings saved, runs cancelled, workers and their folders gone)
    and end the app with 128 + the signal's number, which is put in the returned list. Qt's loop
    runs no Python while idle: the signal wakes it through a socket (signal.set_wakeup_fd)."""
    import signal
    import socket

    from PySide6.QtCore import QSocketNotifier

    from gradviz.engine.stop_signals import STOP_SIGNALS

    got: list[int] = []
    r, w = socket.socketpair()
    r.setblocking(False)
    w.setblocking(False)
    signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN or sig == signal.SIGINT:
            signal.signal(sig, lambda *_: None)  # the wakeup byte says which one came

    def woke() -> None:
        try:
            data = r.recv(64)
        except OSError:
            return
        stops = [s for s in data if s in STOP_SIGNALS]
        if stops and not got:
            got.append(stops[0])
            win.close()
            app.exit(128 + stops[0])

    notifier = QSocketNotifier(r.fileno(), QSocketNotifier.Type.Read, app)
    notifier.activated.connect(woke)
    app._gradviz_stop = (notifier, r, w)  # kept alive with the app
    return got


def _delete_now(win) -> None:
    """Delete the window and its plots while Python and Qt are both whole. Left to the
    interpreter's exit, the window, its pyqtgraph scenes and their items are freed in whatever
    order the garbage collector meets them, and now and then one is freed under another: a
    SIGSEGV on quit (seen once in a full test run, tests/test_gui_start.py)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    win.hide()
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
