"""What every check gets: the run, its comparison, the op's source, and a Finding factory."""

from __future__ import annotations

import os

from gradviz.diagnostics import jax_source, source
from gradviz.diagnostics.finding import CODES, Finding
from gradviz.model import ErrorInfo, RunResult
from gradviz.vocab import CheckStatus, ErrorKind, Framework


class Context:
    def __init__(self, result: RunResult, comparison=None):
        self.result = result
        self.comparison = comparison
        self.framework = result.framework
        self.op = result.name
        self.qualname = result.op.qualname if result.op else result.request.qualname
        self.kind = result.op.kind if result.op else ""
        # the file that defines the op: an imported op's own (package) file, so that every
        # finding names that file's lines, never the importing file's name with them
        self.file = (
            (result.op.where.rpartition(":")[0] or result.op.file)
            if result.op
            else os.path.abspath(result.request.file)
        )
        self.tree = source.parse(self.file)
        self.node = source.top_level(self.tree, self.qualname)
        self.cache: dict = {}  # what one check works out for another (diagnostics.causes)

    # --- source locations ------------------------------------------------------------------
    def op_where(self) -> str:
        if self.result.op is not None:
            return self.result.op.where
        return source.line_of(self.file, self.node)

    def backward(self):
        """The function holding the user's gradient (a JAX rule's bwd or tangent rule: a def or
        a lambda), None where the source shows none."""
        if self.framework == Framework.JAX:
            rule = self.jax_rule()
            return rule.gradient if rule is not None else None
        return source.backward_of(self.tree, self.qualname, module=self.kind in ("module", "layer"))

    def jax_rule(self):
        """The custom_vjp / custom_jvp of a JAX op (its own, or the first one it calls)."""
        if "jax_rule" not in self.cache:
            self.cache["jax_rule"] = (
                jax_source.op_rule(self.tree, self.qualname) if self.tree is not None else None
            )
        return self.cache["jax_rule"]

    def backward_where(self, fallback: str = "") -> str:
        bw = self.backward()
        return (
            jax_source.return_line(self.file, bw)
            if bw is not None
            else (fallback or self.op_where())
        )

    def forward(self):
        return source.forward_of(self.node)

    # --- errors the run produced --------------------------------------------------------------
    def errors(self) -> list[tuple[str, ErrorInfo]]:
        """(mode or "run", error), each distinct error once."""
        out, seen = [], set()
        items = list(self.result.mode_errors.items())
        if self.result.error is not None:
            items.insert(0, ("run", self.result.error))
        for mode, err in items:
            key = (err.type, err.message)
            if key not in seen:
                seen.add(key)
                out.append((mode, err))
        return out

    def error_matching(self, pattern) -> tuple[str, ErrorInfo] | None:
        """The first (mode or "run", error) of errors() whose message `pattern` (a compiled
        regular expression) finds, a cancel never; None when none does."""
        return next(
            (
                (mode, err)
                for mode, err in self.errors()
                if err.kind != ErrorKind.CANCELLED and pattern.search(err.message)
            ),
            None,
        )

    def comparison_of(self, tensor: str):
        for t in getattr(self.comparison, "tensors", ()) or ():
            if t.name == tensor:
                return t
        return None

    def cleared_as_rounding(self) -> set[str]:
        """The tensors the precision check cleared as float32 rounding: no finding calls their
        difference from numeric a bug."""
        return {
            n
            for c in self.result.checks
            if c.name == "precision" and c.status == CheckStatus.PASS
            for n in c.tensors
        }

    # --- findings ------------------------------------------------------------------------------
    def finding(
        self, code: str, severity: str, message: str, fix: str, where: str = "", tensor: str = ""
    ) -> Finding:
        return Finding(
            code=code,
            severity=severity,
            title=CODES[code],
            message=message,
            fix=fix,
            where=where,
            framework=self.framework,
            op=self.op,
            tensor=tensor,
        )

    def fw_name(self) -> str:
        return (
            Framework(self.framework).label
            if self.framework in tuple(Framework)
            else self.framework
        )


def first_lines(text: str, n: int = 1) -> str:
    return " ".join(text.strip().splitlines()[:n])


def fmt(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4g}"
