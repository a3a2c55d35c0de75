"""The window's parity is made in the run's background task (issue 27): each pair's rows once
its frameworks' final results are in, off the GUI thread, held by the analyses; Numbers and the
JSON export read them, and the ParityWorker computes nothing for a pair the run completed."""

import threading

import pytest

pytest.importorskip("pytestqt")

from gui_helpers import keys_of, run_keys  # noqa: E402

pytestmark = pytest.mark.gui


def test_a_run_brings_the_pairs_parity_off_the_gui_thread_into_its_analyses(
    qtbot, make_window, examples_dir, monkeypatch
):
    import gradviz.compare

    files = [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    win = make_window(files)  # default and custom
    real, threads = gradviz.compare.parity, []

    def spy(results):
        threads.append(threading.current_thread())
        return real(results)

    monkeypatch.setattr(gradviz.compare, "parity", spy)
    worker_calls = []
    win.pair_numbers.parity_worker._compute = lambda *a: worker_calls.append(a) or []
    win.tree.select_pair("round_ste")
    run_keys(qtbot, win, keys_of(win, "round_ste"))
    held = win.state.pair_analyses("round_ste")
    assert set(held) == {"torch", "tf"}
    assert held["torch"].parity == held["tf"].parity
    got = [(p.tensor, p.mode, p.verdict, p.max_abs_err) for p in held["torch"].parity]
    assert got == [
        ("x", "value", "match", 0.0),
        ("x", "default", "differs", None),  # TF: None for tf.round; torch: zeros
        ("x", "custom", "match", 0.0),  # the straight-through gradient, equal to the bit
        ("out", "value", "match", 0.0),
        ("out", "default", "match", 0.0),
        ("out", "custom", "match", 0.0),
    ]
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    # Numbers shows the held rows: nothing computed on show, now or shown again
    win.show_pair("round_ste")
    table = win.numbers.parity
    assert table.rowCount() == 6 and "computing" not in win.numbers.parity_label.text()
    win.grid.results = {}  # force the grid to draw again
    win.show_pair("round_ste")
    assert table.rowCount() == 6
    assert [[r.framework for r in c[1]] for c in worker_calls] == [] and len(threads) == 1


def test_a_pair_run_one_framework_at_a_time_is_compared_with_the_other_held(
    qtbot, make_window, examples_dir
):
    """Run tf's round_ste alone after both ran: its parity is made against torch's held result,
    and both analyses then hold the rows about the newest pair of runs."""
    files = [str(examples_dir / "tutorial_torch.py"), str(examples_dir / "tutorial_tf.py")]
    win = make_window(files)
    keys = keys_of(win, "round_ste")
    run_keys(qtbot, win, keys)
    before = win.state.pair_analyses("round_ste")
    [tf_key] = [k for k in keys if k[0] == "tf"]
    run_keys(qtbot, win, [tf_key])
    after = win.state.pair_analyses("round_ste")
    assert after["tf"].result.request is not before["tf"].result.request
    assert after["torch"].result.request is before["torch"].result.request
    assert after["torch"].parity == after["tf"].parity and len(after["tf"].parity) == 6
    assert after["tf"].parity is not before["tf"].parity  # made again, with the new tf run


def test_an_op_in_one_framework_says_what_parity_needs(qtbot, make_window, examples_dir):
    """An op run in one framework: the parity pane names the frameworks a twin may be in (any
    two of three where JAX is installed, not "torch ↔ tf")."""
    from gradviz.model import FRAMEWORKS

    win = make_window([str(examples_dir / "tutorial_torch.py")])
    win.tree.select_pair("mul_weights")
    run_keys(qtbot, win, keys_of(win, "mul_weights"))
    win.show_pair("mul_weights")
    label = win.numbers.parity_label.text()
    assert win.numbers.parity.rowCount() == 0
    if len(FRAMEWORKS) == 2:
        assert label == "<b>torch ↔ tf parity</b>: run the op in both frameworks"
    else:
        assert label == "<b>parity across frameworks</b>: run the op in two or more frameworks"
