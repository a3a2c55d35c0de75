"""Issue 13 items 9 and 10 in the real window (offscreen, real workers): the trap examples show
the verdicts their docstrings promise (the in-place trap is no green match; the detached forward
is a match, custom being right, not broken), and File ▸ Export ▸ Whole run as JSON report… from a window whose
ops ran under different settings gives each op its own and claims none of them at the top."""

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import FakeDialogs, keys_of, run_keys  # noqa: E402
from PySide6.QtWidgets import QMenu  # noqa: E402

from gradviz import report  # noqa: E402
from gradviz.qt import export_actions as EA  # noqa: E402
from gradviz.qt import export_dialogs as ED  # noqa: E402

pytestmark = pytest.mark.gui


def _export_action(win, text):
    """The entry of File ▸ Export as the window installs it (export_actions.install)."""
    menu = QMenu(win)
    EA.install(win.exports, menu)
    return next(a for a in menu.actions() if a.text() == text)


def _docstring(path, name):
    import ast

    tree = ast.parse(open(path, encoding="utf-8").read())
    return next(ast.get_docstring(n) for n in ast.walk(tree) if getattr(n, "name", "") == name)


def test_trap_verdicts_in_the_window_are_what_their_docstrings_say(
    qtbot, make_window, examples_dir
):
    traps = str(examples_dir / "traps_torch.py")
    win = make_window([traps], {"run/modes": "default,custom,numeric"})
    inplace = ("torch", traps, "InPlaceNoMarkDirty")
    detached = ("torch", traps, "DetachedForward")
    run_keys(qtbot, win, [inplace, detached])
    # in-place: its default raised and GV605 warns: an error, in the tree and the row header
    assert win.state.op_mark(inplace) == "error" and win.tree.shown_mark(inplace)[0].startswith("✗")
    win.tree.select_pair("trap_inplace_no_mark_dirty")
    win.show_pair("trap_inplace_no_mark_dirty")
    assert "torch: error" in win.grid.rows["x"].verdicts.text()
    assert "match" not in win.grid.rows["x"].verdicts.text()
    # the docstring says match (custom agrees with numeric; default's missing path is a note)
    assert "the verdict `match`" in _docstring(traps, "DetachedForward")
    assert win.state.op_mark(detached) == "match"
    win.tree.select_pair("trap_detached_forward")
    win.show_pair("trap_detached_forward")
    assert "torch: match" in win.grid.rows["x"].verdicts.text()
    assert "broken" not in win.grid.rows["x"].verdicts.text()


def test_whole_run_json_from_the_window_has_each_ops_own_settings(
    qtbot, make_window, examples_dir, tmp_path, monkeypatch
):
    win = make_window([str(examples_dir / "tutorial_torch.py")], {"run/modes": "default,custom"})
    run_keys(qtbot, win, keys_of(win, "mul_weights"))  # at 200 elements
    sp = win.settings_panel
    sp.shape.setText("20x30")
    sp.seed.setValue(5)
    run_keys(qtbot, win, keys_of(win, "round_ste"))  # then another op otherwise
    fake = FakeDialogs([str(tmp_path / "run.json")])
    monkeypatch.setattr(ED, "dialogs", fake)
    _export_action(win, "Whole run as JSON report…").trigger()
    assert not fake.errors
    data = report.read_json(str(tmp_path / "run.json"))
    ran = {op["name"]: op["settings"] for op in data["ops"]}
    assert ran["mul_weights"]["shape"] == [200] and ran["mul_weights"]["seed"] == 0
    assert ran["round_ste"]["shape"] == [20, 30] and ran["round_ste"]["seed"] == 5
    top = data["settings"]
    assert {"shape", "seed"} <= set(top["varies_by_op"])
    assert "shape" not in top and "seed" not in top
    assert top["modes"] == ["default", "custom"]  # what both ran with


def test_whole_run_json_from_the_window_is_what_gradviz_run_writes(
    qtbot, make_window, examples_dir, corpus_dir, tmp_path, monkeypatch
):
    """The window's JSON export had every op's "diagnostics": [] and no load_errors (issue 27):
    it now holds the findings the window shows and the files it could not load, as `gradviz run
    --json` writes them for the same files and settings."""
    from gradviz.cli import main

    traps, broken = (
        str(examples_dir / "traps_torch.py"),
        str(corpus_dir / "broken" / "syntax_error.py"),
    )
    win = make_window([traps, broken], {"run/modes": "default,custom,numeric"})
    run_keys(qtbot, win, [k for k in win.state.loaded.ops if k[0] == "torch"])
    fake = FakeDialogs([str(tmp_path / "window.json")])
    monkeypatch.setattr(ED, "dialogs", fake)
    _export_action(win, "Whole run as JSON report…").trigger()
    assert not fake.errors
    window = report.read_json(str(tmp_path / "window.json"))
    assert (
        main(["run", traps, broken, "--framework", "torch", "--json", str(tmp_path / "cli.json")])
        == 2
    )  # an op raised, a file did not load
    cli = report.read_json(str(tmp_path / "cli.json"))

    def by_op(data):
        return {
            (op["framework"], op["name"]): (
                {t["name"]: t["verdict"] for t in op["tensors"]},
                sorted((d["code"], d.get("tensor", "")) for d in op["diagnostics"]),
            )
            for op in data["ops"]
        }

    assert by_op(window) == by_op(cli)
    assert any(diags for _, diags in by_op(window).values())  # findings there to compare
    assert window["parity"] == cli["parity"] == []  # torch alone: no pair to compare
    assert _flows(window) == _flows(cli)
    assert [e["file"] for e in window["load_errors"]] == [broken]
    assert window["load_errors"][0]["error"]["type"] == cli["load_errors"][0]["error"]["type"]
    assert window["summary"]["error"] == cli["summary"]["error"]
    # the window's earlier runs under a key of their own, which one CLI run leaves out
    assert "history" not in cli and {h["qualname"] for h in window["history"]} == {
        op["qualname"] for op in window["ops"]
    }


def _flows(data) -> dict:
    return {(op["framework"], op["name"]): op["flow"] for op in data["ops"]}


def test_whole_run_json_from_the_window_has_the_parity_and_flow_gradviz_run_writes(
    qtbot, make_window, corpus_dir, tmp_path, monkeypatch
):
    """A torch/tf twin on the stack graph: the window's export takes the parity rows and the
    flow rows its analyses hold (the run task made them), and they are the numbers `gradviz run
    --json` writes for the same ops and settings."""
    from gradviz.cli import main

    files = [str(corpus_dir / "flow" / "flow_torch.py"), str(corpus_dir / "flow" / "flow_tf.py")]
    win = make_window(files, {"run/graph": "stack", "run/depth": "2", "run/shape": "8"})
    ops = ("sign_ste", "reverse_grad")
    run_keys(qtbot, win, [k for op in ops for k in keys_of(win, op)])
    held = list(win.state.results.analyses().values())
    assert len(held) == 4 and all(a.parity for a in held) and all(len(a.flow) == 2 for a in held)
    fake = FakeDialogs([str(tmp_path / "window.json")])
    monkeypatch.setattr(ED, "dialogs", fake)
    _export_action(win, "Whole run as JSON report…").trigger()
    assert not fake.errors
    window = report.read_json(str(tmp_path / "window.json"))
    argv = ["run", *files, "--graph", "stack", "--depth", "2", "--shape", "8"]
    argv += ["--modes", "default,custom", "--op", ops[0], "--op", ops[1]]
    assert main([*argv, "--json", str(tmp_path / "cli.json")]) == 0
    cli = report.read_json(str(tmp_path / "cli.json"))
    # the ops in the order the command line lists them, so the parity rows too, row for row
    assert [(op["framework"], op["name"]) for op in window["ops"]] == [
        (op["framework"], op["name"]) for op in cli["ops"]
    ]
    assert window["parity"] == cli["parity"]
    assert {p["op"] for p in cli["parity"]} == set(ops)
    # sign_ste's custom gradient is the same in both frameworks, to the last bit at layer 2
    h2 = [p for p in cli["parity"] if (p["op"], p["tensor"], p["mode"]) == (ops[0], "h2", "custom")]
    assert [(p["verdict"], p["max_abs_err"]) for p in h2] == [("match", 0.0)]
    assert _flows(window) == _flows(cli)
    assert [row["norm"]["default"] for row in _flows(cli)[("tf", "sign_ste")]] == [0.0, 0.0]
