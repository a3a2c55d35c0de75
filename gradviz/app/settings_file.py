"""The settings file: plain text that gradviz parses itself, one `key = value` a line (a list
setting takes one line per entry), each value checked against app/settings_schema.py. Nothing
of it ever reaches a deserialiser: Qt's QSettings turns a `@Variant(...)` value into a Python
object by unpickling it (even `allKeys()` in a fresh process), so gradviz no longer reads its
settings through QSettings at all.

A value that does not parse, is out of range or under a key gradviz does not know is left out
(the default applies) and listed in `fallbacks`, for the window to name once. `[section]` lines
are read as a key prefix, so the plain values of a file Qt wrote before (`[run]` / `seed=3`)
carry over; what Qt serialised (`@Variant`, `@ByteArray`) is text here and is refused like any
other bad value. The file is read with a bound, only when it is a regular file, and written
atomically, readable by its owner only.

The API is the part of QSettings the window used (value, setValue, contains, remove, allKeys,
sync, clear, fileName), so widgets take either a SettingsFile or nothing."""

from __future__ import annotations

import os
import stat
from typing import Any

from gradviz.app.settings_schema import SCHEMA, parse, text_of

READ_MAX = 1 << 20  # bytes: a settings file is a few KiB; more is not one
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t", "s": " "}
_SCHEMA = object()  # value()'s default: the schema's
HEADER = "# gradviz settings: `key = value`, one a line; gradviz reads this file itself\n"


def default_path() -> str:
    """Where a plain `gradviz` keeps its settings (GRADVIZ_SETTINGS names another file)."""
    if os.environ.get("GRADVIZ_SETTINGS"):
        return os.environ["GRADVIZ_SETTINGS"]
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "gradviz", "gradviz.conf")


class SettingsFile:
    def __init__(self, path: str | None = None) -> None:
        self.path = os.path.abspath(path or default_path())
        self.fallbacks: list[str] = []  # "key='raw'": unusable values, defaults used
        self._values: dict[str, Any] = {}
        self._read()

    # --- QSettings' API, as the window uses it --------------------------------------------------
    def fileName(self) -> str:  # noqa: N802 - the name QSettings gives it
        return self.path

    def value(self, key: str, default: Any = _SCHEMA, type: Any = None) -> Any:  # noqa: A002
        """The saved value, else `default`, else the schema's default."""
        if key in self._values:
            return self._values[key]
        if default is not _SCHEMA:
            return default
        spec = SCHEMA.get(key)
        return (
            list(spec.default) if spec and spec.kind == "list" else (spec.default if spec else None)
        )

    def setValue(self, key: str, value: Any) -> None:  # noqa: N802
        """Keep `value` (checked as a read value is: one the schema refuses is not saved)."""
        if isinstance(value, (bytes, bytearray)) or type(value).__name__ == "QByteArray":
            value = bytes(value)
        try:
            typed = parse(key, text_of(key, value))
        except ValueError:
            return
        if self._values.get(key, object()) != typed:
            self._values[key] = typed
            self.sync()

    def contains(self, key: str) -> bool:
        return key in self._values

    def remove(self, key: str) -> None:
        """The key, and every key under it (`remove("run")`), as QSettings does."""
        gone = [k for k in self._values if k == key or k.startswith(key.rstrip("/") + "/")]
        for k in gone:
            del self._values[k]
        if gone:
            self.sync()

    def allKeys(self) -> list[str]:  # noqa: N802
        return list(self._values)

    def clear(self) -> None:
        self._values.clear()
        self.sync()

    def sync(self) -> None:
        """Write the file now (atomically; a folder that cannot be made leaves it unwritten:
        settings are a convenience, never a reason to fail)."""
        from gradviz.atomic_file import atomic_path

        lines = [HEADER]
        for key in sorted(self._values):
            text = text_of(key, self._values[key])
            for item in (text if isinstance(text, list) else [text]) or [""]:
                lines.append(f"{key} = {_escape(item)}\n")
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            with atomic_path(self.path, mode=0o600) as tmp, open(tmp, "w", encoding="utf-8") as f:
                f.write("".join(lines))
        except OSError:
            pass

    # --- reading ---------------------------------------------------------------------------------
    def _read(self) -> None:
        text = _bounded_text(self.path)
        if text is None:
            return
        raw: dict[str, Any] = {}
        section = ""
        for line in text.splitlines():
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                section = "" if section == "General" else section + "/"
                continue
            key, eq, value = line.partition("=")
            if not eq:
                self.fallbacks.append(f"{_short(line)} (not key = value)")
                continue
            key, value = section + key.strip(), _unescape(value.strip())
            spec = SCHEMA.get(key)
            if spec is not None and spec.kind == "list":
                raw.setdefault(key, []).append(value)
            elif key in raw:
                self.fallbacks.append(f"{key} (given more than once)")
            else:
                raw[key] = value
        for key, value in raw.items():
            try:
                self._values[key] = parse(key, value)
            except (ValueError, OverflowError) as exc:
                self.fallbacks.append(f"{key}={_short(value)} ({exc})")


def _bounded_text(path: str) -> str | None:
    """The file's text, or None when there is none to read. Only a regular file is read (a
    FIFO would block, a device never end), and only its first READ_MAX bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, READ_MAX)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _escape(text: str) -> str:
    out = "".join(_ESCAPES.get(c, c) for c in text)
    if out[-1:] == " ":  # survives the reader's strip()
        out = out[:-1] + "\\s"
    if out[:1] == " ":
        out = "\\s" + out[1:]
    return "\\" + out if out[:1] == '"' else out


def _unescape(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':  # a quoted value Qt wrote (`"-3,3"`)
        text = text[1:-1].replace('\\"', '"')
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_UNESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _short(value: Any, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"
