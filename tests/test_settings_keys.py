"""Settings keys are declared once, with the schema (issue 27): every reader and writer of the
settings file names app/settings_schema's Key, run_key or device_key, so a key misspelt in one
module (read under one name, written under another, falling back to its default in silence)
cannot happen. Every key used is declared, and every declared key is one the file keeps."""

import ast
import re
from pathlib import Path

import gradviz
from gradviz.app.settings_schema import RUN_FIELDS, RUN_KEYS, SCHEMA, Key, device_key, run_key
from gradviz.vocab import Framework

ROOT = Path(gradviz.__file__).parent
SCHEMA_FILE = ROOT / "app" / "settings_schema.py"
SECTIONS = ("run", "view", "files", "window", "numbers", "app")
ACCESS = {"value", "setValue", "contains", "remove"}  # the settings file's API by key


def sources():
    for path in sorted(ROOT.rglob("*.py")):
        yield path, path.read_text(encoding="utf-8")


def test_the_declared_keys_are_the_schemas_keys():
    declared = {v for k, v in vars(Key).items() if k.isupper()}
    declared |= {run_key(f) for f in RUN_FIELDS if f != "device"}
    declared |= {device_key(fw) for fw in Framework}
    assert declared == set(SCHEMA)
    assert set(RUN_KEYS) == {k for k in SCHEMA if k.startswith("run/")} - {Key.WATCH}


def test_no_key_is_spelt_outside_the_schema():
    literal = re.compile(r"""["'](?:%s)/""" % "|".join(SECTIONS))
    spelt = {
        f"{path.relative_to(ROOT)}:{n}": line.strip()
        for path, text in sources()
        if path != SCHEMA_FILE
        for n, line in enumerate(text.splitlines(), 1)
        if literal.search(line)
    }
    assert spelt == {}


def _key_uses(tree):
    """(line, first argument) of each call reading or writing the settings by key."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ACCESS
            and node.args
            and re.search(r"qs|qsettings", ast.unparse(node.func.value))
        ):
            yield node.lineno, node.args[0]


def test_every_key_read_or_written_is_declared():
    uses, wrong = 0, {}
    for path, text in sources():
        tree = ast.parse(text)
        for line, arg in _key_uses(tree):
            uses += 1
            where = f"{path.relative_to(ROOT)}:{line}"
            if isinstance(arg, (ast.Constant, ast.JoinedStr)):
                wrong[where] = ast.unparse(arg)  # a key spelt where it is used
        for node in ast.walk(tree):  # and every Key.NAME named is one Key declares
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Key"
                and not hasattr(Key, node.attr)
            ):
                wrong[f"{path.relative_to(ROOT)}:{node.lineno}"] = ast.unparse(node)
    assert uses >= 20  # the walk sees the window's readers and writers
    assert wrong == {}


def test_run_key_refuses_what_is_not_a_run_setting():
    import pytest

    assert run_key("seed") == "run/seed" and device_key("torch") == "run/device/torch"
    for bad in ("sed", "device", "watch"):
        with pytest.raises(KeyError):
            run_key(bad)
