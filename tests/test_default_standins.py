"""torch's default mode must not leak its stand-ins (backends/torch_overrides.py): a reference to
`Fn.apply`, or to a swapped alias, taken while a default run is on (a module first imported
then, a cache a helper fills on first use) must act as the real `apply` afterwards, so that
every later custom run gets the custom backward, whichever mode ran first."""

import textwrap
import uuid

import numpy as np
from op_runs import run

from gradviz.model import RunSettings

CUSTOM = RunSettings(modes=("custom",))
DEFAULT = RunSettings(modes=("default",))
BOTH = RunSettings(modes=("custom", "default"))
N = 200

STE = """\
    import torch
    from torch.autograd import Function


    class RoundSTE(Function):
        # straight-through round: custom gradient ones, torch's own (round) zeros
        @staticmethod
        def forward(ctx, x):
            return torch.round(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output


    round_ste = RoundSTE.apply
"""

# ways a module or a helper takes the reference, first used inside the op's forward
LATE = """\
    import functools

    from {pkg}.ste import RoundSTE, round_ste

    by_class = RoundSTE.apply
    by_alias = round_ste
    in_list = [RoundSTE.apply]
    partial = functools.partial(RoundSTE.apply)


    def _closure():
        fn = RoundSTE.apply
        return lambda x: fn(x)


    closure = _closure()


    class Twice(RoundSTE):
        # defined during the run: its apply is read through RoundSTE's stand-in
        @staticmethod
        def backward(ctx, grad_output):
            return 2.0 * grad_output


    twice = Twice.apply
"""

CACHE = """\
    _cache = {{}}


    def quantize(x):
        fn = _cache.get("round")
        if fn is None:
            from {pkg}.ste import RoundSTE
            fn = _cache["round"] = RoundSTE.apply
        return fn(x)
"""

HOWS = ("by_class", "by_alias", "in_list", "partial", "closure", "twice")
SLOPE = {"twice": 2.0}  # the custom gradient of each; ones where not named


def _package(tmp_path) -> str:
    pkg = f"standin_{uuid.uuid4().hex[:10]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    for name, src in (("ste", STE), ("late", LATE), ("cache", CACHE)):
        (tmp_path / pkg / f"{name}.py").write_text(textwrap.dedent(src.format(pkg=pkg)))
    ops = ["import torch", f"from {pkg} import ste", ""]
    for how in HOWS:
        ref = f"late.{how}[0]" if how == "in_list" else f"late.{how}"
        ops += [
            "",
            f"class Late_{how}(torch.nn.Module):",
            "    def forward(self, x):",
            f"        from {pkg} import late",
            f"        return {ref}(x)",
            "",
        ]
    ops += [
        "",
        "class Cached(torch.nn.Module):",
        "    def forward(self, x):",
        f"        from {pkg} import cache",
        "        return cache.quantize(x)",
        "",
    ]
    ops += [
        "",
        "class Probe(torch.nn.Module):",
        "    def forward(self, x):",
        f"        from {pkg} import late",
        "        real = ste.RoundSTE.apply",
        "        assert late.by_class == real and hash(late.by_class) == hash(real)",
        "        assert late.by_class.__self__ is ste.RoundSTE",
        "        assert late.twice.__self__ is late.Twice",
        "        return late.by_class(x)",
        "",
    ]
    path = tmp_path / f"ops_{pkg}.py"
    path.write_text("\n".join(ops))
    return str(path)


def _custom(qualname):
    return SLOPE.get(qualname.removeprefix("Late_"), 1.0) * np.ones(N)


def _custom_is_ones(engine, path, qualname, times=3):
    for _ in range(times):
        res = run(engine, path, qualname, "torch", CUSTOM)
        np.testing.assert_array_equal(res.tensor("x").grads["custom"], _custom(qualname))


def _default_is_zeros(res):
    x = res.tensor("x")
    np.testing.assert_array_equal(x.grads["default"], np.zeros(N))
    assert "default" not in x.absent


def test_references_taken_in_a_default_run_act_as_the_real_apply_afterwards(engine, tmp_path):
    path = _package(tmp_path)
    # the default run comes first: `late` is imported inside it and binds every reference then
    first = run(engine, path, "Late_by_class", "torch", DEFAULT)
    _default_is_zeros(first)
    for how in HOWS:
        qualname = f"Late_{how}"
        _custom_is_ones(engine, path, qualname)
        both = run(engine, path, qualname, "torch", BOTH)
        np.testing.assert_array_equal(both.tensor("x").grads["custom"], _custom(qualname))
        _default_is_zeros(both)  # each stand-in taken then is the default in default runs
        _default_is_zeros(run(engine, path, qualname, "torch", DEFAULT))
        _custom_is_ones(engine, path, qualname, times=1)
    # and they read as the real apply: its class, equality, hash
    probe = run(engine, path, "Probe", "torch", BOTH)
    np.testing.assert_array_equal(probe.tensor("x").grads["custom"], np.ones(N))
    _default_is_zeros(probe)


def test_references_taken_in_a_custom_run_are_swapped_or_reported(engine, tmp_path):
    path = _package(tmp_path)
    _custom_is_ones(engine, path, "Late_by_class")  # `late` is imported in a custom run
    for how in HOWS:
        qualname = f"Late_{how}"
        res = run(engine, path, qualname, "torch", BOTH)
        x = res.tensor("x")
        np.testing.assert_array_equal(x.grads["custom"], _custom(qualname))
        if how in ("by_class", "by_alias", "twice"):  # module aliases: swapped
            _default_is_zeros(res)
        else:  # out of reach: the default column is absent and says why, never custom's
            assert "default" not in x.grads
            assert "RoundSTE" in x.absent["default"] and "override" in x.absent["default"]
        _custom_is_ones(engine, path, qualname)


def test_a_cache_filled_in_a_default_run_gives_custom_afterwards(engine, tmp_path):
    path = _package(tmp_path)
    for _ in range(2):
        _default_is_zeros(run(engine, path, "Cached", "torch", DEFAULT))
        _custom_is_ones(engine, path, "Cached")
    both = run(engine, path, "Cached", "torch", BOTH)
    np.testing.assert_array_equal(both.tensor("x").grads["custom"], np.ones(N))
    _default_is_zeros(both)


def test_a_cache_filled_in_a_custom_run_leaves_default_absent(engine, tmp_path):
    path = _package(tmp_path)
    _custom_is_ones(engine, path, "Cached")
    for _ in range(2):
        res = run(engine, path, "Cached", "torch", BOTH)
        x = res.tensor("x")
        np.testing.assert_array_equal(x.grads["custom"], np.ones(N))
        assert "default" not in x.grads and "RoundSTE" in x.absent["default"]
        _custom_is_ones(engine, path, "Cached", times=1)


def test_a_function_first_defined_during_the_default_call_gets_the_real_default(engine, tmp_path):
    # `fresh` is imported inside the default run: its Function had no stand-in then; the mode
    # is built once more, and the column is torch's own, not absent and not custom's
    pkg = f"fresh_{uuid.uuid4().hex[:10]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    no_alias = STE.replace("round_ste = RoundSTE.apply", "")  # nothing the alias index finds
    (tmp_path / pkg / "fresh.py").write_text(textwrap.dedent(no_alias))
    path = tmp_path / "ops_fresh.py"
    path.write_text(
        textwrap.dedent(f"""\
        import torch


        class Fresh(torch.nn.Module):
            def forward(self, x):
                from {pkg} import fresh
                return fresh.RoundSTE.apply(x)
    """)
    )
    _default_is_zeros(run(engine, path, "Fresh", "torch", DEFAULT))
    _custom_is_ones(engine, path, "Fresh")
