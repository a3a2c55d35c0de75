"""The default mode's swap of bound `Fn.apply` aliases, now that what a module holds is kept between
runs (backends/torch_aliases.py): an alias bound, imported or edited after its module was read is
still swapped, in the run that first meets it, and the library is left as it was."""

import sys
import textwrap
import types
import uuid

import numpy as np
from op_runs import run, verdicts

from gradviz.backends.torch_aliases import AliasIndex
from gradviz.model import RunSettings

REVGRAD = """\
    class RevGrad(Function):
        @staticmethod
        def forward(ctx, input_, alpha_):
            ctx.save_for_backward(input_, alpha_)
            return input_

        @staticmethod
        def backward(ctx, grad_output):
            _, alpha_ = ctx.saved_tensors
            return -grad_output * alpha_, None
"""

# A module that gradviz takes for a library's (its file in site-packages): not read again on
# every run, unlike the user's own modules.
LIBRARY = """\
import os
import sys
import sysconfig
import types

import torch
from torch.autograd import Function

{revgrad}

LIB = "gradviz_test_lib_{tag}"
lib = types.ModuleType(LIB)
lib.__file__ = os.path.join(sysconfig.get_paths()["purelib"], LIB + ".py")
{start}
sys.modules[LIB] = lib


class Plain(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


class Reverse(torch.nn.Module):
    def forward(self, x):
        {bind}
        return lib.revgrad(x, torch.tensor(2.0))
"""


def _library_ops(write_module, start: str, bind: str) -> str:
    src = LIBRARY.format(
        revgrad=textwrap.dedent(REVGRAD), tag=uuid.uuid4().hex[:10], start=start, bind=bind
    )
    return write_module(f"lib_ops_{uuid.uuid4().hex[:6]}.py", src)


def _reversed_and_default(res, name="x"):
    x = res.tensor(name)
    np.testing.assert_array_equal(x.grads["custom"], -2 * np.ones(200))
    np.testing.assert_array_equal(x.grads["default"], np.ones(200))
    assert "default" not in x.absent
    assert verdicts(res)[name] == "differs"


def test_alias_rebound_in_a_library_module_already_read_is_swapped(engine, write_module):
    # `lib.revgrad` goes from None to an alias: the namespace keeps its size, so the kept reading
    # misses it, the graph shows the custom backward, and a fresh look finds the alias
    path = _library_ops(
        write_module,
        "lib.revgrad = None",
        "if lib.revgrad is None:\n            lib.revgrad = RevGrad.apply",
    )
    plain = run(engine, path, "Plain", "torch")  # the default run that reads `lib`
    np.testing.assert_array_equal(plain.tensor("x").grads["default"], 2 * np.ones(200))
    _reversed_and_default(run(engine, path, "Reverse", "torch"))
    # the library is left as it was: custom reverses again, and so does the next full run
    again = run(engine, path, "Reverse", "torch", RunSettings(modes=("custom",)))
    np.testing.assert_array_equal(again.tensor("x").grads["custom"], -2 * np.ones(200))
    _reversed_and_default(run(engine, path, "Reverse", "torch"))


def test_alias_added_to_a_library_module_already_read_is_swapped(engine, write_module):
    path = _library_ops(
        write_module, "", "if not hasattr(lib, 'revgrad'):\n            lib.revgrad = RevGrad.apply"
    )
    run(engine, path, "Plain", "torch")
    _reversed_and_default(run(engine, path, "Reverse", "torch"))


def test_alias_in_a_module_imported_during_the_default_call(engine, tmp_path):
    # imported inside the default mode's patch: the Function and its alias are new to the swap
    pkg = f"late_{uuid.uuid4().hex[:10]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "functional.py").write_text(
        "from torch.autograd import Function\n\n\n"
        + textwrap.dedent(REVGRAD)
        + "\n\nrevgrad = RevGrad.apply\n"
    )
    path = tmp_path / "imports_late.py"
    path.write_text(
        textwrap.dedent(f"""\
        import torch


        class Late(torch.nn.Module):
            def forward(self, x):
                from {pkg} import functional
                return functional.revgrad(x, torch.tensor(2.0))
    """)
    )
    first = run(engine, path, "Late", "torch", RunSettings(modes=("default",)))
    np.testing.assert_array_equal(first.tensor("x").grads["default"], np.ones(200))
    _reversed_and_default(run(engine, path, "Late", "torch"))


def test_alias_in_the_users_file_edited_between_runs(engine, write_module):
    src = """\
        import torch
        from torch.autograd import Function

{revgrad}

        revgrad = RevGrad.apply


        class Reverse(torch.nn.Module):
            def forward(self, x):
                return revgrad(x, torch.tensor({alpha}))
    """
    body = textwrap.indent(textwrap.dedent(REVGRAD), " " * 8)
    path = write_module("edited_alias.py", src.format(revgrad=body, alpha="2.0"))
    _reversed_and_default(run(engine, path, "Reverse", "torch"))
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(src.format(revgrad=body, alpha="3.0")))
    res = run(engine, path, "Reverse", "torch")
    np.testing.assert_array_equal(res.tensor("x").grads["custom"], -3 * np.ones(200))
    np.testing.assert_array_equal(res.tensor("x").grads["default"], np.ones(200))


# --- the index itself, on plain modules (no torch) ------------------------------------------------


class Alias:
    """Stands for a bound Fn.apply."""


def _is_alias(value) -> bool:
    return type(value) is Alias


def _library(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__file__ = "/usr/lib/python3/site-packages/" + name + ".py"  # not a user's file
    vars(mod).update(attrs)
    sys.modules[name] = mod
    return mod


def _found(index) -> set:
    return {
        (mod.__name__, attr)
        for mod, attr, _ in index.find()
        if mod.__name__.startswith("gv_alias_")
    }


def test_index_finds_rereads_and_misses_only_what_it_cannot_see():
    tag = uuid.uuid4().hex[:8]
    a_name, b_name, c_name = f"gv_alias_a_{tag}", f"gv_alias_b_{tag}", f"gv_alias_c_{tag}"
    skipped = f"fw_{tag}"
    try:
        a = _library(a_name, one=Alias(), other=None)
        _library(skipped, hidden=Alias())
        index = AliasIndex(_is_alias, (skipped,))
        assert _found(index) == {(a_name, "one")}
        assert not index.missed()
        a.two = Alias()  # the namespace grew: read again
        assert _found(index) == {(a_name, "one"), (a_name, "two")}
        del a.one  # a kept alias gone: read again
        assert _found(index) == {(a_name, "two")}
        _library(b_name, three=Alias())  # a new module
        assert _found(index) == {(a_name, "two"), (b_name, "three")}
        a.other = Alias()  # rebound, same size: unseen until a fresh look
        assert _found(index) == {(a_name, "two"), (b_name, "three")}
        assert index.missed()
        assert _found(index) == {(a_name, "two"), (a_name, "other"), (b_name, "three")}
        assert not index.missed()
        _library(b_name)  # another object under the name
        assert _found(index) == {(a_name, "two"), (a_name, "other")}
        _library(b_name, four=Alias())
        _library(c_name)  # b is no longer sys.modules' last entry
        _library(b_name, five=Alias())  # and is replaced in place: no sign but the graph
        seen = (b_name, "five") in _found(index) or index.missed()
        assert seen and (b_name, "five") in _found(index)
    finally:
        for name in (a_name, b_name, c_name, skipped):
            sys.modules.pop(name, None)
