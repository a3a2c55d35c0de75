"""Dotted module names resolved to files in the parent without importing anything
(gradviz.module_files), and the package a file belongs to."""

import importlib.machinery
import os
import sys

import pytest

from gradviz.import_scan import frameworks_used
from gradviz.module_files import ModuleNameError, is_module_name, op_file, package_module, resolve


def make(root, files: dict):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# __init__.py files that would leave a mark if anything imported them
TRAP = "open(__file__ + '.imported', 'w').close()\n"


def test_package_module_and_its_file_name_each_other(tmp_path, monkeypatch):
    make(
        tmp_path,
        {
            "top/__init__.py": TRAP,
            "top/sub/__init__.py": TRAP,
            "top/sub/ops.py": "",
            "top/sub/__main__.py": "",
        },
    )
    monkeypatch.chdir(tmp_path)
    ops = resolve("top.sub.ops")
    assert ops == str(tmp_path / "top" / "sub" / "ops.py")
    assert package_module(ops) == (str(tmp_path), "top.sub.ops")
    assert resolve("top.sub") == str(tmp_path / "top" / "sub" / "__init__.py")
    assert package_module(resolve("top.sub")) == (str(tmp_path), "top.sub")
    assert not list(tmp_path.rglob("*.imported"))  # nothing ran
    assert "top" not in sys.modules


def test_current_folder_first_then_sys_path(tmp_path, monkeypatch):
    make(tmp_path, {"here/mod.py": "", "lib/mod.py": "", "lib/only_lib.py": ""})
    monkeypatch.chdir(tmp_path / "here")
    search = [str(tmp_path / "lib")]
    assert resolve("mod", search) == str(tmp_path / "here" / "mod.py")
    assert resolve("only_lib", search) == str(tmp_path / "lib" / "only_lib.py")


def test_namespace_packages_span_folders(tmp_path, monkeypatch):
    make(tmp_path, {"a/ns/one.py": "", "b/ns/two/__init__.py": "", "b/ns/two/ops.py": ""})
    monkeypatch.chdir(tmp_path)
    search = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert resolve("ns.one", search) == str(tmp_path / "a" / "ns" / "one.py")
    assert resolve("ns.two.ops", search) == str(tmp_path / "b" / "ns" / "two" / "ops.py")
    with pytest.raises(ModuleNameError, match="namespace package"):
        resolve("ns", search)


def test_regular_package_hides_a_later_namespace_portion(tmp_path, monkeypatch):
    make(tmp_path, {"a/pkg/x.py": "", "b/pkg/__init__.py": "", "b/pkg/y.py": ""})
    monkeypatch.chdir(tmp_path)
    search = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert resolve("pkg.y", search) == str(tmp_path / "b" / "pkg" / "y.py")
    with pytest.raises(ModuleNameError, match="no module named 'pkg.x'"):
        resolve("pkg.x", search)  # as Python: a regular package is the whole package


def test_names_that_resolve_to_nothing_say_why(tmp_path, monkeypatch):
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    make(
        tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": "", f"pkg/fast{ext}": "", "pkg/fast.py": ""}
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModuleNameError, match="no module named 'nope' in the current folder"):
        resolve("nope", [])
    with pytest.raises(ModuleNameError, match="'pkg.mod' is a module .* not a package"):
        resolve("pkg.mod.deeper", [])
    with pytest.raises(ModuleNameError, match="'pkg.fast' is a compiled module"):
        resolve("pkg.fast", [])  # found before fast.py, as Python finds it
    with pytest.raises(ModuleNameError, match="not a module name"):
        resolve("pkg/mod", [])


def test_an_existing_path_wins_over_a_module_name(tmp_path, monkeypatch):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": "", "pkg.ops": "import torch\n"})
    monkeypatch.chdir(tmp_path)
    assert op_file("pkg.ops") == str(tmp_path / "pkg.ops")
    os.remove(tmp_path / "pkg.ops")
    assert op_file("pkg.ops") == str(tmp_path / "pkg" / "ops.py")
    assert op_file("missing.py") == str(tmp_path / "missing.py")  # a file name: the path
    assert not is_module_name("ops.py") and is_module_name("a.b_c.d1")


def test_files_outside_packages_and_unimportable_folders(tmp_path):
    make(
        tmp_path,
        {
            "plain.py": "",
            "my-pkg/__init__.py": "",
            "my-pkg/inner/__init__.py": "",
            "my-pkg/inner/ops.py": "",
            "my-pkg/ops.py": "",
        },
    )
    assert package_module(str(tmp_path / "plain.py")) is None
    assert package_module(str(tmp_path / "my-pkg" / "ops.py")) is None
    assert package_module(str(tmp_path / "my-pkg" / "inner" / "ops.py")) == (
        str(tmp_path / "my-pkg"),
        "inner.ops",
    )


def test_frameworks_of_a_package_file_from_its_relative_imports(tmp_path):
    make(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/backend.py": "import tensorflow as tf\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/ops.py": "from ..backend import tf\n",
            "pkg/sub/more.py": "from . import twin\n",
            "pkg/sub/twin.py": "import torch\n",
        },
    )
    assert frameworks_used(str(tmp_path / "pkg" / "sub" / "ops.py")) == (("tf",), None)
    assert frameworks_used(str(tmp_path / "pkg" / "sub" / "more.py")) == (("torch",), None)
