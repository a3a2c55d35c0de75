"""Helpers for tests that run one op through the session engine and read its verdicts."""

from gradviz.compare import compare_result
from gradviz.model import RunRequest, RunSettings

DEFAULT_SETTINGS = RunSettings()  # frozen: one shared default is safe


def run(engine, path, qualname, framework, settings=DEFAULT_SETTINGS):
    """The op's result, which must have run."""
    [res] = engine.run([RunRequest(str(path), qualname, framework, settings)])
    assert res.status == "ok", res.error
    return res


def verdicts(res) -> dict:
    return {t.name: t.verdict for t in compare_result(res).tensors}


# corpus ops that hang, crash the worker or eat memory on purpose cost a timeout or a restart
# each: tests/test_worker.py and test_isolation.py have them
NOT_RUN = ("hang", "segfault", "abort", "os_exit", "sys_exit", "memory_hog")


def corpus_files(examples: bool = False) -> list[str]:
    """Every file of tests/corpus that runs to its end, and the built-in examples if asked."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    files = sorted(
        str(p)
        for p in (here / "corpus").glob("*/*.py")
        if not any(word in p.name for word in NOT_RUN)
    )
    if examples:
        files += sorted(str(p) for p in (here.parent / "resources" / "examples").glob("*.py"))
    return files
