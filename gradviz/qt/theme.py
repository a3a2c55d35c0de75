"""Colours and labels shared by the views, so a verdict or a mode looks the same everywhere."""
from __future__ import annotations

VERDICT_COLORS = {           # background tints for tables and row headers
    "match": "#d8f0d8",
    "surrogate": "#dde8fb",
    "differs": "#fbe3c8",
    "non-finite": "#f7d0d0",
    "broken": "#e4d9f2",
    "error": "#f4b6b6",
    "no-gradient": "#eeeeee",   # int64 / bool inputs: nothing compared, nothing to alarm
}
VERDICT_TEXT = {
    "match": "#1b6e1b", "surrogate": "#1f4fa3", "differs": "#a3560d",
    "non-finite": "#b01c1c", "broken": "#6b3fa0", "error": "#9a0d0d",
    "no-gradient": "#555555",
}

# Plot pens per mode: custom is the user's, drawn strongest.
MODE_COLORS = {"default": "#3b7dd8", "custom": "#e0622a", "numeric": "#3a9a4a"}
FRAMEWORK_COLORS = {"torch": "#ee4c2c", "tf": "#ff8f00"}
FRAMEWORK_LABELS = {"torch": "PyTorch", "tf": "TensorFlow"}

STATE_COLORS = {"starting": "#8a6d00", "ready": "#1b6e1b", "busy": "#1f4fa3",
                "failed": "#9a0d0d", "stopped": "#666666"}

# Progress of one op in one framework, then its worst verdict, as the op tree shows it
# (gradviz.app.state.AppState.op_mark): a glyph and its colour.
OP_MARKS = {"queued": ("…", "#666666"), "running": ("▶", "#1f4fa3"), "cancelled": ("⊘", "#666666"),
            "ok": ("✓", "#1b6e1b"), "match": ("✓", VERDICT_TEXT["match"]),
            "surrogate": ("≈", VERDICT_TEXT["surrogate"]), "differs": ("≠", VERDICT_TEXT["differs"]),
            "non-finite": ("∞", VERDICT_TEXT["non-finite"]), "broken": ("⚠", VERDICT_TEXT["broken"]),
            "error": ("✗", VERDICT_TEXT["error"])}

# Contract checks (--checks), as the checks matrix shows them: (icon, text colour, background).
CHECK_STYLES = {"pass": ("✓", "#1b6e1b", "#d8f0d8"), "fail": ("✗", "#9a0d0d", "#f7d0d0"),
                "skip": ("–", "#666666", "#eeeeee"), "pending": ("…", "#8a6d00", "#fff6d6")}

NAN_COLOR = "#d01010"
INF_COLOR = "#8000c0"


def verdict_color(verdict: str) -> str:
    return VERDICT_COLORS.get(verdict, "#ffffff")
