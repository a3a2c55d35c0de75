"""Numeric flags that cannot work are refused up front with exit 2 and a message naming the flag
(issue 11, item 9): no worker starts, nothing is allocated."""

import math

import pytest

from gradviz.app.settings_schema import (
    SEED_RANGE,
    TIMEOUT_RANGE,
    SettingsError,
    memory_bytes,
    run_settings,
)
from gradviz.cli import main

SEED_MAX = SEED_RANGE[1]


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["--shape", "100000000000"],
            "--shape 100000000000: one tensor of 100,000,000,000 float32",
        ),
        (["--shape", "100000x100000x100", "--dtype", "float64"], "more than this machine's"),
        (["--timeout", "nan"], "--timeout nan: give a number of seconds from 0.01 to 86400"),
        (["--timeout", "inf"], "--timeout inf"),
        (["--timeout", "0"], "--timeout 0.0"),
        (["--timeout", "-1"], "--timeout -1.0"),
        (["--timeout", "86401"], "--timeout 86401.0"),
        (["--device", ""], "--device '': name one"),
        (["--seed", "-5"], f"--seed -5: give an integer from 0 to {SEED_MAX}"),
        (["--seed", str(2**32)], f"--seed {2**32}"),
        (["--upstream", "const:nan"], "upstream const:nan: the constant must be a finite number"),
        (["--upstream", "const:-inf"], "upstream const:-inf: the constant must be a finite number"),
    ],
)
def test_bad_numbers_exit_2_before_any_worker(argv, says, capsys, monkeypatch):
    import gradviz.engine

    monkeypatch.setattr(gradviz.engine, "Engine", None)  # a started engine would fail loudly
    assert main(["run", "nothing_to_load.py", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err, err


def problems(shape, dtype, seed, timeout) -> list[str]:
    try:
        run_settings({"shape": shape, "dtype": dtype, "seed": seed, "timeout": timeout})
    except SettingsError as exc:
        return list(exc.problems)
    return []


def test_edges_that_can_run_are_accepted():
    assert problems((200,), "float32", 0, 120.0) == []
    assert problems((4, 50), "float64", SEED_MAX, TIMEOUT_RANGE[0]) == []
    assert problems((4, 50), "float64", 0, TIMEOUT_RANGE[1]) == []
    have = memory_bytes()
    assert have is not None and have > 0
    fits = have // 4 // 2  # half the memory in float32: one tensor fits
    assert problems((fits,), "float32", 0, 1.0) == []
    assert problems((fits * 4,), "float32", 0, 1.0) != []


def test_every_problem_is_named_at_once():
    assert problems((10**12,), "float32", -1, math.nan) == ["shape", "seed", "timeout"]


@pytest.mark.parametrize("value", ["lots", "nan", "-2", "infG"])
def test_an_unreadable_worker_memory_limit_is_refused_not_ignored(value, capsys, monkeypatch):
    """GRADVIZ_WORKER_MEMORY=lots was silently ignored (issue 26, minor): now exit 2, saying
    what it takes, before any worker starts."""
    from gradviz.cli import main

    monkeypatch.setenv("GRADVIZ_WORKER_MEMORY", value)
    assert main(["run", "--modes", "custom"]) == 2
    err = capsys.readouterr().err
    assert f"GRADVIZ_WORKER_MEMORY={value!r}: give GiB (6, 1.5), a size with a unit" in err


def test_a_readable_worker_memory_limit_is_taken(monkeypatch):
    from gradviz.engine.memory import memory_limit_from_env, memory_setting_problem

    for value, limit in (("1.5", 3 * 2**29), ("512M", 2**29), ("off", 0)):
        monkeypatch.setenv("GRADVIZ_WORKER_MEMORY", value)
        assert memory_setting_problem() == "" and memory_limit_from_env() == limit
