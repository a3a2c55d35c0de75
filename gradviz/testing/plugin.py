"""The pytest plugin (entry point pytest11 `gradviz`): `pytest --gradviz ops/` collects every op
of the given files as a test item, node id `FILE::OP[FRAMEWORK]`, passing when its verdicts pass
(match, surrogate, or what @gradviz.op(expect=...) names) and failing with the op's report.

Items are plain pytest items, so -k, -x, --lf and xdist select and order them as any test. Files
are loaded by the workers of the shared engine (session.py) at collection, the ops run in them:
one warm worker per framework for the whole session. Inert without --gradviz (pytest loads it in
every session of an environment where gradviz is installed): nothing of gradviz is imported then.
"""

from __future__ import annotations

import pytest

from gradviz.errors import GradvizError


def pytest_addoption(parser) -> None:
    # the defaults are RunSettings' (as gradviz run's), but for the upstream: a test draws a
    # random one, which a backward that ignores its incoming gradient cannot pass by chance
    from gradviz.model import DTYPES, GRAPHS, RunSettings, settings_texts

    default = settings_texts(RunSettings())
    group = parser.getgroup("gradviz", "gradviz: every op of the given files as a test")
    group.addoption(
        "--gradviz",
        action="store_true",
        help="collect the ops of the given files or folders (every .py file) as "
        "tests FILE::OP[FRAMEWORK]",
    )
    group.addoption(
        "--gradviz-checks",
        default="none",
        metavar="all|none|NAME,...",
        help="contract checks per op (as gradviz run --checks)",
    )
    group.addoption("--gradviz-upstream", default="random", metavar="ones|random|const:K")
    group.addoption("--gradviz-seed", type=int, default=default["seed"])
    group.addoption("--gradviz-shape", default=default["shape"], metavar="200|4x50")
    group.addoption("--gradviz-dtype", default=default["dtype"], choices=DTYPES)
    group.addoption("--gradviz-graph", default=default["graph"], choices=GRAPHS)
    group.addoption(
        "--gradviz-timeout",
        type=float,
        default=default["timeout"],
        help="seconds per op and framework",
    )
    group.addoption(
        "--gradviz-repro",
        metavar="DIR",
        default=None,
        help="write a reproduction script (gradviz run --repro) of each failing op "
        "into DIR, named in its failure",
    )


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "gradviz: an op collected by --gradviz (-m gradviz)")
    if config.getoption("gradviz", False):
        _settings(config)  # options that cannot run are refused before any file loads


def _settings(config):
    """The run settings of the --gradviz-* options, by the one settings schema's rule (gradviz
    run's); pytest.UsageError naming each option that cannot run."""
    from gradviz.app.settings_schema import SettingsError
    from gradviz.testing.run import settings_for

    opt = config.getoption
    try:
        return settings_for(
            opt("gradviz_graph"),
            opt("gradviz_upstream"),
            opt("gradviz_checks"),
            seed=opt("gradviz_seed"),
            shape=opt("gradviz_shape"),
            dtype=opt("gradviz_dtype"),
            timeout=opt("gradviz_timeout"),
        )
    except SettingsError as exc:
        raise pytest.UsageError(
            "\n".join(f"--gradviz-{m}" for m in exc.problems.values())
        ) from None


def pytest_collect_file(file_path, parent):
    if (
        not parent.config.getoption("gradviz")
        or file_path.suffix != ".py"
        or file_path.name == "conftest.py"
    ):
        return None
    return OpFile.from_parent(parent, path=file_path)


def pytest_unconfigure(config) -> None:
    if config.getoption("gradviz", False):
        from gradviz.testing.session import close

        close()


class OpFile(pytest.File):
    """One op file: its ops in each framework it uses, as found by that framework's worker."""

    def collect(self):
        from gradviz.cli.output import error_paragraph
        from gradviz.testing.session import shared_engine

        timeout = self.config.getoption("gradviz_timeout")
        catalogs = shared_engine().load([str(self.path)], timeout=timeout)
        failed = [c for c in catalogs if c.error is not None]
        if failed:
            raise self.CollectError(
                "\n".join(
                    error_paragraph(
                        f"gradviz cannot load {self.path} ({c.framework or '?'})", c.error
                    )
                    for c in failed
                )
            )
        for cat in catalogs:
            names = [op.name for op in cat.ops]
            for op in cat.ops:
                # the pairing name, or the Python name where two ops of the file share one
                shown = op.name if names.count(op.name) == 1 else op.qualname
                name = f"{shown}[{cat.framework}]"
                # the node id given whole: pytest 9 parses "[...]" of an id into its params,
                # and an id built from the name alone did not equal --lf's parsed one
                yield OpItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", op=op)


class OpFailed(GradvizError):
    """An op whose verdicts do not pass: its report is the whole failure text."""


class OpItem(pytest.Item):
    def __init__(self, *, op, **kwargs):
        super().__init__(**kwargs)
        self.op = op
        self.add_marker(pytest.mark.gradviz)

    def runtest(self) -> None:
        from gradviz.app.analysis import analyze
        from gradviz.model import RunRequest
        from gradviz.testing.judge import judgement
        from gradviz.testing.report import op_report
        from gradviz.testing.session import shared_engine

        settings = _settings(self.config)
        req = RunRequest(self.op.file, self.op.qualname, self.op.framework, settings)
        analysis = analyze(shared_engine().run_one(req), curves=False)
        if analysis.problem:
            raise RuntimeError(f"gradviz could not compare {self.op.name}: {analysis.problem}")
        passed, _ = judgement(analysis, self.op.expect)
        if not passed:
            raise OpFailed(op_report(analysis, self.op.expect) + self._repro(analysis))

    def _repro(self, analysis) -> str:
        from gradviz.testing.report import repro_note

        return repro_note(analysis, self.config.getoption("gradviz_repro"))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, OpFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, max(self.op.line - 1, 0), f"{self.op.name} ({self.op.framework})"
