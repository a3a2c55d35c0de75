"""One entry per problem of a run, for the diagnostics list: a user's exception that several
modes hit (and the op-level error it caused) is one entry naming the modes, and an exception a
diagnostic rewrote in plain words (GV101-GV106, JAX's rule traps GV608-GV611, or any finding at
the same file:line) is that
finding, with the exception kept as its detail. A cancelled run is not a problem; a cancelled
numeric pass is one "info" entry that says what is missing."""

from __future__ import annotations

from dataclasses import dataclass

from gradviz.app.analysis import Analysis
from gradviz.model import ErrorInfo
from gradviz.vocab import ErrorKind, Mode


@dataclass(frozen=True)
class Problem:
    severity: str  # "error" | "warning" | "info"
    op: str  # what the list shows in its op column: "name (framework)"
    message: str
    fix: str = ""
    where: str = ""  # "file:line" in the user's file, or ""
    detail: str = ""  # traceback, or the exception a finding rewrote
    code: str = ""  # GVnnn-..., for findings
    tensor: str = ""  # the tensor it is about, when it is about one
    key: tuple = ()  # (framework, file, qualname) of the run


def problem_of(finding, label: str, key: tuple = (), detail: str = "") -> Problem:
    """A finding (gradviz.diagnostics.Finding) as the diagnostics list shows it: the one place
    a finding becomes an entry."""
    return Problem(
        finding.severity,
        label,
        finding.message,
        finding.fix,
        finding.where,
        detail,
        finding.code,
        finding.tensor,
        key,
    )


def check_problems(key: tuple, analysis: Analysis) -> list[Problem]:
    """The entries of the op's contract checks (GV7xx), once they are in (Analysis.with_checks)."""
    from gradviz.diagnostics.contract_checks import CHECK_CODES

    res = analysis.result
    return [
        problem_of(f, f"{res.name} ({res.framework})", key)
        for f in analysis.findings
        if f.code in CHECK_CODES
    ]


# findings that stand for the exception a custom mode raised (JAX's rule traps name the rule's
# line, which its exception, raised after the rule returned, does not)
_REWRITES = (
    "GV101",
    "GV102",
    "GV103",
    "GV104",
    "GV105",
    "GV106",
    "GV608",
    "GV609",
    "GV610",
    "GV611",
)


def _error_text(err) -> str:
    return f"{err.type}: {err.message}"


def problems(key: tuple, analysis: Analysis) -> list[Problem]:
    res = analysis.result
    label = f"{res.name} ({res.framework})"
    out: list[Problem] = []
    if analysis.problem:
        out.append(
            Problem("error", label, "internal error while comparing: " + analysis.problem, key=key)
        )
    if res.partial:
        return out  # the rest comes with the final result
    findings = list(analysis.findings)
    rewritten = [f for f in findings if f.code[:5] in _REWRITES]
    details: dict[int, list[str]] = {}  # finding index -> exceptions it stands for
    groups: dict[tuple, list[str]] = {}  # (type, message, where) -> modes that raised it
    errors: dict[tuple, ErrorInfo] = {}
    if res.error is not None and res.error.kind != ErrorKind.CANCELLED:
        k = (res.error.type, res.error.message, res.error.where)
        groups.setdefault(k, [])
        errors[k] = res.error
    for mode, err in res.mode_errors.items():
        if err.kind == ErrorKind.CANCELLED:  # not a problem of the op: say what is missing
            out.append(
                Problem(
                    "info",
                    f"{label} · {mode}",
                    f"{mode}: {err.message}: the other "
                    f"modes are shown, custom is not checked against {mode} "
                    "(▶ Run computes it)",
                    key=key,
                )
            )
            continue
        k = (err.type, err.message, err.where)
        groups.setdefault(k, []).append(mode)
        errors.setdefault(k, err)
    for k, modes in groups.items():
        err = errors[k]
        at_line = [i for i, f in enumerate(findings) if err.where and f.where == err.where]
        by_code = (
            [findings.index(f) for f in rewritten] if modes and Mode.DEFAULT not in modes else []
        )
        covering = at_line or by_code
        if covering:
            details.setdefault(covering[0], []).append(
                _error_text(err) + "\n" + (err.traceback or "")
            )
            continue
        where_modes = f" · {', '.join(modes)}" if modes else ""
        out.append(
            Problem(
                "error",
                label + where_modes,
                _error_text(err),
                where=err.where,
                detail=err.traceback,
                key=key,
            )
        )
    for i, f in enumerate(findings):
        out.append(problem_of(f, label, key, "\n".join(details.get(i, ()))))
    for w in res.warnings:
        out.append(Problem("warning", label, w, key=key))
    return out
