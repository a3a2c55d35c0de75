"""The open files come back on the next launch (issue 13 item 11.1): real windows offscreen over
the session engine, one real INI file per test; each launch is built as `gradviz [FILES]` builds
it (qt.app.open_window), each window closed before the next is made."""

import os

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import RUN_TIMEOUT_MS  # noqa: E402
from op_packages import write_package  # noqa: E402

from gradviz.app.open_list import restore, saved_entries  # noqa: E402
from gradviz.app.settings_file import SettingsFile  # noqa: E402
from gradviz.app.settings_schema import Key  # noqa: E402
from gradviz.catalog import builtin_examples  # noqa: E402
from gradviz.qt.app import open_window  # noqa: E402

pytestmark = pytest.mark.gui

OP_SRC = """
import torch

class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0
"""


@pytest.fixture
def ini(tmp_path):
    path = tmp_path / "gradviz.ini"
    qs = SettingsFile(str(path))
    qs.setValue("run/modes", "default,custom")  # not a fresh config: no first-launch run
    qs.sync()
    return path


@pytest.fixture
def ops(tmp_path):
    """Two op files, ScaleA and ScaleB."""
    paths = []
    for name in ("ScaleA", "ScaleB"):
        path = tmp_path / f"{name.lower()}.py"
        path.write_text(OP_SRC.format(name=name))
        paths.append(str(path))
    return paths


def launch(qtbot, engine, ini, files=(), wait=True):
    """One launch on the INI file: the window once its files are loaded (when it has any)."""
    win, run = open_window(files, run=False, engine=engine, qsettings=SettingsFile(str(ini)))
    assert not run
    qtbot.addWidget(win)
    win.show()
    if wait:
        with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
            win.start()
    else:
        win.start()
    return win


def opened(qtbot, win, paths, module_names=None):
    with qtbot.waitSignal(win.catalogsLoaded, timeout=RUN_TIMEOUT_MS):
        win.open_files(paths, module_names)


def op_names(win):
    return sorted(k[2] for k in win.state.loaded.ops)


def saved(ini):
    return saved_entries(SettingsFile(str(ini)).value(Key.OPEN))


def test_open_files_come_back_and_a_removed_one_does_not(qtbot, engine, ini, ops):
    win = launch(qtbot, engine, ini)  # no list saved yet: the examples
    assert sorted(win.state.loaded.files) == sorted(builtin_examples())
    for f in list(win.state.loaded.files):
        win.remove_file(f)
    opened(qtbot, win, ops[:1])
    opened(qtbot, win, ops[1:])
    assert op_names(win) == ["ScaleA", "ScaleB"]
    win.close()

    win = launch(qtbot, engine, ini)  # the next launch: both files, their ops
    assert win.state.loaded.files == ops
    assert op_names(win) == ["ScaleA", "ScaleB"]
    assert sorted(k[2] for k in win.tree.visible_keys()) == ["ScaleA", "ScaleB"]
    assert not win.diagnostics.messages()
    win.remove_file(ops[0])  # the op tree's Remove
    assert saved(ini) == [ops[1]]  # saved at once, not only on close
    win.close()

    win = launch(qtbot, engine, ini)
    assert win.state.loaded.files == [ops[1]] and op_names(win) == ["ScaleB"]
    win.remove_file(ops[1])  # the user closed everything
    win.close()
    assert saved(ini) == []
    win = launch(qtbot, engine, ini, wait=False)  # an empty list stays empty: no examples
    assert win.state.loaded.files == [] and not win.state.loading
    win.close()


def test_a_deleted_file_is_reported_missing_and_the_other_loads(qtbot, engine, ini, ops):
    SettingsFile(str(ini)).setValue(Key.OPEN, ops)
    os.remove(ops[0])
    win = launch(qtbot, engine, ini)
    assert win.state.loaded.files == [ops[1]] and op_names(win) == ["ScaleB"]
    assert win.diagnostics.messages() == [f"missing: {ops[0]}"]
    assert f"missing: {ops[0]}" in win.log.toPlainText()
    assert win.tabs.currentWidget() is win.diagnostics
    assert saved(ini) == [ops[1]]  # said once, then left out of the list
    with open(ops[0], "w") as f:  # back on disk and opened again
        f.write(OP_SRC.format(name="ScaleA"))
    opened(qtbot, win, ops[:1])
    assert win.diagnostics.messages() == []  # no longer missing
    assert saved(ini) == [ops[1], ops[0]]
    win.close()


def test_command_line_files_win_and_leave_the_saved_list(qtbot, engine, ini, ops, tmp_path):
    SettingsFile(str(ini)).setValue(Key.OPEN, ops)
    other = tmp_path / "other.py"
    other.write_text(OP_SRC.format(name="Other"))
    win = launch(qtbot, engine, ini, [str(other)])  # `gradviz other.py`
    assert win.state.loaded.files == [str(other)] and op_names(win) == ["Other"]
    opened(qtbot, win, ops[:1])  # a one-off look: nothing saved
    win.remove_file(str(other))
    win.close()
    assert saved(ini) == ops
    win = launch(qtbot, engine, ini)  # a plain `gradviz` again
    assert win.state.loaded.files == ops
    win.close()


def test_reset_settings_keeps_the_open_files(qtbot, engine, ini, ops):
    SettingsFile(str(ini)).setValue(Key.OPEN, ops)
    win = launch(qtbot, engine, ini)
    win.act_reset_settings.trigger()
    win.close()
    assert saved(ini) == ops
    # the reset did run: the modes are the defaults again (saved on close), not "default,custom"
    assert SettingsFile(str(ini)).value("run/modes") == "default,custom,numeric"


def test_a_module_opened_by_name_comes_back_by_name(qtbot, engine, ini, tmp_path, monkeypatch):
    pkg = write_package(tmp_path)
    op_file = str(pkg / "layers" / "quant_torch.py")
    monkeypatch.chdir(tmp_path)  # where `qpkg` is found by name
    win = launch(qtbot, engine, ini)
    for f in list(win.state.loaded.files):
        win.remove_file(f)
    opened(qtbot, win, [op_file], {op_file: "qpkg.layers.quant_torch"})  # as Open module… does
    win.close()
    assert saved(ini) == ["qpkg.layers.quant_torch"]
    assert "\nfiles/open = qpkg.layers.quant_torch\n" in ini.read_text()  # a plain string

    win = launch(qtbot, engine, ini)  # found again by its name
    assert win.state.loaded.files == [op_file] and op_names(win) == ["RoundSTE"]
    assert win.state.loaded.module_names == {op_file: "qpkg.layers.quant_torch"}
    win.close()
    assert saved(ini) == ["qpkg.layers.quant_torch"]

    monkeypatch.chdir(tmp_path / "qpkg")  # launched elsewhere: the name finds nothing
    win = launch(qtbot, engine, ini, wait=False)
    assert win.state.loaded.files == []
    [message] = win.diagnostics.messages()
    assert message.startswith("missing: qpkg.layers.quant_torch (no module named 'qpkg'")
    win.close()


def test_saved_entries_are_plain_strings_and_bad_ones_are_named(tmp_path):
    keep = tmp_path / "keep.py"
    keep.write_text("x = 1\n")
    assert saved_entries(None) is None  # never saved
    assert saved_entries(str(keep)) == [str(keep)]  # INI reads a one-item list as a string
    assert saved_entries([str(keep), ""]) == [str(keep)]
    assert saved_entries([1, 2]) is None
    r = restore([str(keep), str(tmp_path / "gone.py"), "relative/ops.py", str(keep)])
    assert r.files == (str(keep),) and r.module_names == {}
    assert r.missing_lines() == [
        f"missing: {tmp_path / 'gone.py'}",
        "missing: relative/ops.py (neither an absolute path nor a module name)",
    ]
