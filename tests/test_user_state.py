"""One file cannot break another in the shared warm workers: sys.path, the current folder, the
environment and users' helper modules are each file's own; TF devices cannot be hidden from the
others; a compiled library's frame is never blamed as the user's."""

import os
import textwrap

from gradviz.model import RunRequest, RunSettings
from gradviz.user_frames import is_user_frame

CLOBBER = """\
    import os
    import sys

    import torch

    import utils  # this folder's utils.py

    HOME = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [HOME, "/nonexistent"]  # no standard library, no site-packages any more
    os.chdir(HOME)
    os.environ["GRADVIZ_CLOBBERED"] = "yes"


    class Clobberer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            # its own state is still there for its own calls
            assert os.getcwd() == HOME and os.environ["GRADVIZ_CLOBBERED"] == "yes"
            import utils as again
            return x * again.FACTOR

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * utils.FACTOR
    """

INNOCENT = """\
    import os

    import torch

    import utils  # this folder's utils.py, not the other file's


    class Innocent(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            import colorsys  # a standard module imported late: needs the real sys.path
            assert colorsys.rgb_to_hsv(0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)
            assert "GRADVIZ_CLOBBERED" not in os.environ, "the environment leaked"
            assert os.getcwd() == {cwd!r}, os.getcwd()
            return x * utils.FACTOR

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * utils.FACTOR
    """


def write(folder, name, source):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_a_file_that_rewrites_the_interpreter_state_breaks_no_other(engine, tmp_path):
    worker_cwd = os.getcwd()  # the workers start in the test's folder
    bad = write(tmp_path / "a", "clobber_torch.py", CLOBBER)
    write(tmp_path / "a", "utils.py", "FACTOR = 3.0\n")
    good = write(tmp_path / "b", "innocent_torch.py", INNOCENT.format(cwd=worker_cwd))
    write(tmp_path / "b", "utils.py", "FACTOR = 5.0\n")
    cats = engine.load([bad, good])
    assert [c.error for c in cats] == [None, None]
    for _ in range(2):  # and again, with both files warm in the worker
        for path, name, factor in ((bad, "Clobberer", 3.0), (good, "Innocent", 5.0)):
            res = engine.run_one(RunRequest(path, name, "torch", RunSettings(shape=(4,))))
            assert res.status == "ok", res.error
            assert res.tensor("x").grads["custom"].tolist() == [factor] * 4
            assert res.tensor("x").grads["default"].tolist() == [factor] * 4


def test_a_tf_file_hiding_every_device_is_named_and_spares_the_others(engine, tmp_path):
    hides = write(
        tmp_path,
        "hides_devices_tf.py",
        """\
        import tensorflow as tf

        tf.config.set_visible_devices([], "CPU")


        @tf.custom_gradient
        def ident(x):
            def grad(upstream):
                return upstream
            return x, grad
        """,
    )
    good = write(
        tmp_path,
        "scale_tf.py",
        """\
        import tensorflow as tf


        @tf.custom_gradient
        def triple(x):
            def grad(upstream):
                return upstream * 3.0
            return x * 3.0, grad
        """,
    )
    cats = {c.file: c for c in engine.load([hides, good])}
    err = cats[hides].error
    assert err is not None and err.kind == "load" and err.where == f"{hides}:3"
    assert "Visible devices cannot be modified" in err.message
    res = engine.run_one(RunRequest(good, "triple", "tf", RunSettings(shape=(4,))))
    assert res.status == "ok", res.error
    assert res.tensor("x").grads["custom"].tolist() == [3.0] * 4


def test_compiled_and_library_frames_are_never_the_users():
    assert not is_user_frame("numpy/random/bit_generator.pyx")
    assert not is_user_frame("bit_generator.pyx")
    assert not is_user_frame("/home/someone/numpy/random/bit_generator.pyx")
    assert not is_user_frame(os.__file__)
    assert not is_user_frame("<frozen importlib._bootstrap>")
    assert is_user_frame("/home/someone/project/ops.py")


def test_framework_settings_changed_at_import_stay_with_their_file(engine, tmp_path):
    changes = write(
        tmp_path,
        "float64_no_grad_torch.py",
        """\
        import torch

        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)


        class Doubles(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                assert torch.get_default_dtype() == torch.float64  # its own setting holds
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * 2
        """,
    )
    innocent = write(
        tmp_path,
        "innocent_dtype_torch.py",
        """\
        import torch


        class Triples(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                assert torch.get_default_dtype() == torch.float32, torch.get_default_dtype()
                return x * 3

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * 3
        """,
    )
    assert [c.error for c in engine.load([changes, innocent])] == [None, None]
    for path, name, factor in ((changes, "Doubles", 2.0), (innocent, "Triples", 3.0)):
        res = engine.run_one(RunRequest(path, name, "torch", RunSettings(shape=(4,))))
        assert res.status == "ok", res.error
        assert res.tensor("x").grads["custom"].tolist() == [factor] * 4


def test_the_users_modules_found_after_the_marker_are_those_the_full_comparison_finds(
    tmp_path, monkeypatch
):
    # user_state reads only the names added to sys.modules since its marker; at every step the
    # names it takes must be sys.modules.keys() - _base_modules, read in full
    import sys
    import types

    from gradviz.backends import user_state as us

    def module(name, user):
        mod = types.ModuleType(name)
        mod.__file__ = (
            str(tmp_path / f"{name}.py") if user else f"/usr/lib/python3/site-packages/{name}.py"
        )
        return mod

    tag = os.urandom(4).hex()
    names = [f"gv_us_{tag}_{i}" for i in range(6)]
    base_name = f"gv_us_{tag}_base"
    sys.modules[base_name] = module(base_name, False)
    monkeypatch.setattr(us, "_base_modules", frozenset(sys.modules) - {us._MARK})
    monkeypatch.setattr(us, "_kept_names", set())
    monkeypatch.delitem(sys.modules, us._MARK, raising=False)

    def capture():
        want = set(sys.modules.keys() - us._base_modules) - {us._MARK}
        assert us._added_names() == want
        users = {n for n in want if us._is_users(sys.modules[n])}
        state = us._capture(take_user_modules=True)
        assert set(state.modules) == users
        assert not users & set(sys.modules)
        assert next(reversed(sys.modules)) == us._MARK
        return users

    try:
        sys.modules[names[0]] = module(names[0], False)  # a library a file imported
        sys.modules[names[1]] = module(names[1], True)  # the file's helper
        assert capture() == {names[1]}  # the first look reads all names
        sys.modules[names[2]] = module(names[2], True)
        sys.modules[names[1]] = module(names[1], True)  # imported again after its removal
        assert capture() == {names[1], names[2]}
        sys.modules[names[0]] = module(names[0], True)  # replaced in place, before the marker
        assert capture() == {names[0]}
        sys.modules[names[3]] = module(names[3], False)
        del sys.modules[base_name]  # a base name gone and back: not new
        sys.modules[base_name] = module(base_name, True)
        assert capture() == set()
        sys.modules[names[4]] = module(names[4], True)
        del sys.modules[us._MARK]  # user code removed the marker
        sys.modules[names[5]] = module(names[5], True)
        assert capture() == {names[4], names[5]}
        del sys.modules[names[3]]
        assert capture() == set()
    finally:
        for name in names + [base_name, us._MARK]:
            sys.modules.pop(name, None)
