"""File ▸ Export ▸ Reproduction script in the real window: the shown op's script, which prints
the numbers the window's analysis holds (issue 30)."""

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui

from gui_helpers import keys_of, run_keys  # noqa: E402
from PySide6.QtWidgets import QMenu  # noqa: E402
from repro_scripts import printed_rows, run_script, same_number  # noqa: E402

from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt import export_dialogs as ED  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus" / "pytest_plugin"


class Answers(ED.Dialogs):
    def __init__(self, folder):
        self.folder, self.said, self.errors = folder, "", []

    def folder_path(self, parent, caption, start):
        return self.folder

    def confirm_overwrite(self, parent, path):
        return True

    def error(self, parent, title, text):
        self.errors.append((title, text))

    def done(self, parent, text):
        self.said = text


def test_export_reproduction_script_of_the_shown_op(qtbot, make_window, tmp_path, monkeypatch):
    path = str(CORPUS / "ops_torch.py")
    win = make_window([path], {"run/modes": "default,custom,numeric"})
    run_keys(qtbot, win, keys_of(win, "HalfSquare"))
    win.tree.select_pair("HalfSquare")
    win.show_pair("HalfSquare")
    folder = tmp_path / "scripts"
    folder.mkdir()
    answers = Answers(str(folder))
    monkeypatch.setattr(ED, "dialogs", answers)
    menu = QMenu(win)
    EA.install(win.exports, menu)
    next(a for a in menu.actions() if a.text() == "Reproduction script (this op)…").trigger()
    assert answers.errors == []
    assert answers.said == f"saved 1 reproduction script(s) in {folder}"
    assert sorted(os.listdir(folder)) == ["repro_HalfSquare_torch.npz", "repro_HalfSquare_torch.py"]
    rows = printed_rows(run_script(folder / "repro_HalfSquare_torch.py"))
    comp = win.state.results.get(("torch", os.path.abspath(path), "HalfSquare")).comparison
    for t in comp.tensors:
        assert rows[t.name] == tuple(
            f"{t.metrics[k].max_abs_err:.3g}" for k in ("custom~default", "custom~numeric")
        ), (t.name, rows)
    assert rows["x"][0] == rows["x"][1] != "0"  # half the truth: off by as much from both


@pytest.mark.skipif(
    not __import__("gradviz.vocab").vocab.Framework.JAX.installed, reason="jax is not installed"
)
def test_export_of_a_jax_op(qtbot, make_window, tmp_path, monkeypatch):
    """A custom_vjp's script from the window, as `--repro` writes it (issue 31)."""
    path = str(Path(__file__).resolve().parent / "corpus" / "repro" / "ops_jax.py")
    win = make_window([path], {"run/modes": "default,custom,numeric"})
    run_keys(qtbot, win, keys_of(win, "half_tanh"))
    win.tree.select_pair("half_tanh")
    win.show_pair("half_tanh")
    folder = tmp_path / "scripts"
    folder.mkdir()
    answers = Answers(str(folder))
    monkeypatch.setattr(ED, "dialogs", answers)
    menu = QMenu(win)
    EA.install(win.exports, menu)
    next(a for a in menu.actions() if a.text() == "Reproduction script (this op)…").trigger()
    assert answers.errors == [] and answers.said == f"saved 1 reproduction script(s) in {folder}"
    assert sorted(os.listdir(folder)) == ["repro_half_tanh_jax.npz", "repro_half_tanh_jax.py"]
    rows = printed_rows(run_script(folder / "repro_half_tanh_jax.py"))
    comp = win.state.results.get(("jax", os.path.abspath(path), "half_tanh")).comparison
    for t in comp.tensors:
        default, numeric = (
            f"{t.metrics[k].max_abs_err:.3g}" for k in ("custom~default", "custom~numeric")
        )
        # JAX's numeric pass batches the op graph's forwards too: the rounding floor may differ
        assert rows[t.name][0] == default and same_number(rows[t.name][1], numeric), (t.name, rows)
    assert rows["x"][0] == rows["x"][1] != "0"  # half the truth: off by as much from both
