"""Helpers for tests that run one op through the session engine and read its verdicts."""
from gradviz.compare import compare_result
from gradviz.model import RunRequest, RunSettings

DEFAULT_SETTINGS = RunSettings()   # frozen: one shared default is safe


def run(engine, path, qualname, framework, settings=DEFAULT_SETTINGS):
    """The op's result, which must have run."""
    [res] = engine.run([RunRequest(str(path), qualname, framework, settings)])
    assert res.status == "ok", res.error
    return res


def verdicts(res) -> dict:
    return {t.name: t.verdict for t in compare_result(res).tensors}
