"""gradviz as users install it: resources found through importlib.resources, `--version`, the
desktop entry, and a wheel built by `python -m build` that works from outside the checkout."""

import importlib.resources
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import gradviz
from gradviz.vocab import Framework

ROOT = Path(__file__).resolve().parent.parent


def test_resources_are_the_package_gradviz_resources(examples_dir):
    """The checkout's resources/ is installed (editable here) as gradviz.resources, which is where
    catalog finds the examples; no path guessed from the package's folder."""
    from gradviz.bundled import EXAMPLES_DIR
    from gradviz.catalog import builtin_examples, trap_examples

    if importlib.util.find_spec("gradviz.resources") is None:
        pytest.skip(
            "this environment's editable install predates gradviz.resources: "
            "run pip install -e . again"
        )
    found = Path(str(importlib.resources.files("gradviz.resources")))
    assert found.resolve() == (ROOT / "resources").resolve()
    assert EXAMPLES_DIR.resolve() == examples_dir.resolve()
    jax = Framework.JAX.installed  # JAX's examples are offered only where it is installed
    assert [Path(p).name for p in builtin_examples()] == [
        *(["tutorial_jax.py"] if jax else []),
        "tutorial_tf.py",
        "tutorial_torch.py",
    ]
    assert [Path(p).name for p in trap_examples()] == [
        *(["traps_jax.py"] if jax else []),
        "traps_tf.py",
        "traps_torch.py",
    ]


def _gradviz(*args, env=None, cwd=None, exe=(sys.executable, "-m", "gradviz"), timeout=300):
    return subprocess.run(
        [*exe, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
    )


def test_version_is_the_package_version():
    proc = _gradviz("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"gradviz {gradviz.__version__}\n"
    from importlib.metadata import version

    assert version("gradviz") == gradviz.__version__  # pyproject reads the same attribute
    both = _gradviz("--version", "--uninstall-desktop-entry")
    assert both.returncode == 2 and "not allowed with" in both.stderr


# --- desktop entry -----------------------------------------------------------------------------
def _desktop_keys(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if line)


def _exec_argv(exec_value: str) -> list[str]:
    """The Exec key back to an argv, by the Desktop Entry spec: the string's escapes first, then
    arguments split on spaces, double quotes with \\ before " ` $ \\; field codes dropped."""
    text = exec_value.replace("\\\\", "\\").replace("%%", "\0")
    argv, arg, quoted, i = [], None, False, 0
    while i < len(text):
        c = text[i]
        if quoted and c == "\\" and text[i + 1] in '"`$\\':
            arg, i = arg + text[i + 1], i + 2
            continue
        if c == '"':
            quoted, arg = not quoted, arg or ""
        elif c == " " and not quoted:
            if arg is not None:
                argv.append(arg)
            arg = None
        else:
            arg = (arg or "") + c
        i += 1
    if arg is not None:
        argv.append(arg)
    return [a.replace("\0", "%") for a in argv if not a.startswith("%")]


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG desktop entries are Linux's")
def test_desktop_entry_install_and_uninstall(tmp_path):
    data = tmp_path / "xdg data"  # a space: the paths must survive quoting
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    proc = _gradviz("--install-desktop-entry", env=env)
    assert proc.returncode == 0, proc.stderr
    desktop = data / "applications" / "gradviz.desktop"
    svg = data / "icons" / "hicolor" / "scalable" / "apps" / "gradviz.svg"
    png = data / "icons" / "hicolor" / "256x256" / "apps" / "gradviz.png"
    assert set(proc.stdout.split("\n")) >= {f"wrote {desktop}", f"wrote {svg}", f"wrote {png}"}
    assert svg.read_bytes() == (ROOT / "resources" / "gradviz.svg").read_bytes()
    assert png.read_bytes() == (ROOT / "resources" / "gradviz.png").read_bytes()
    keys = _desktop_keys(desktop)
    assert (keys["Type"], keys["Name"], keys["Icon"], keys["Terminal"]) == (
        "Application",
        "gradviz",
        "gradviz",
        "false",
    )
    assert keys["Exec"].endswith(" %F")
    # the launcher's command is this installation's gradviz, and it runs
    argv = _exec_argv(keys["Exec"])
    launched = _gradviz("--version", exe=argv, env=env)
    assert launched.stdout == f"gradviz {gradviz.__version__}\n", launched.stderr
    validate = shutil.which("desktop-file-validate")
    if validate:  # Debian's desktop-file-utils, where installed
        checked = subprocess.run([validate, str(desktop)], capture_output=True, text=True)
        assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout

    proc = _gradviz("--uninstall-desktop-entry", env=env)
    assert proc.returncode == 0, proc.stderr
    assert not desktop.exists() and not svg.exists() and not png.exists()
    assert f"removed {desktop}" in proc.stdout
    again = _gradviz("--uninstall-desktop-entry", env=env)
    assert again.returncode == 0 and "no gradviz desktop entry" in again.stdout


def test_exec_quoting_of_odd_paths():
    from gradviz.desktop_entry import desktop_file_text

    odd = ["/opt/my apps/$HOME/100%/gradviz", '/x/"q"/a\\b']
    [exec_value] = [
        line[5:] for line in desktop_file_text(odd).splitlines() if line.startswith("Exec=")
    ]
    assert exec_value == r'"/opt/my apps/\\$HOME/100%%/gradviz" "/x/\\"q\\"/a\\\\b" %F'
    assert _exec_argv(exec_value) == odd


def test_relative_xdg_data_home_is_ignored(monkeypatch, tmp_path):
    from gradviz.desktop_entry import data_home

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/share")  # invalid per the XDG spec
    assert data_home() == tmp_path / ".local" / "share"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    assert data_home() == tmp_path / "d"


# --- the wheel ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`python -m build`: the sdist, then the wheel built from that sdist (so the sdist is
    complete), with this environment's setuptools (nothing downloaded)."""
    import setuptools

    if tuple(int(x) for x in setuptools.__version__.split(".")[:2]) < (70, 1):
        pytest.skip(
            f"setuptools {setuptools.__version__} here; the test extra asks for >=70.1: "
            "pip install -e '.[test]' again"
        )
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [wheel] = out.glob("gradviz-*.whl")
    [sdist] = out.glob("gradviz-*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def wheel_venv(built, tmp_path_factory):
    """A fresh venv holding only the wheel; the heavy dependencies (torch, tensorflow, Qt) come
    from this test environment's site-packages through a .pth file instead of a download."""
    wheel, _ = built
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # only site-packages folders: not the checkout; .pth files in them (the editable install's
    # finder) stay unread, since only a venv's own site folder has its .pth files executed
    libs = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    (Path(purelib) / "test_environment.pth").write_text("\n".join(libs) + "\n")
    proc = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GRADVIZ"))}
    return dict(env, **extra)


# building, installing and three cold starts of both frameworks: minutes on a loaded machine
@pytest.mark.timeout(900)
def test_wheel_and_sdist_carry_the_resources(built):
    wheel, sdist = built
    names = set(zipfile.ZipFile(wheel).namelist())
    for fw in ("torch", "tf", "jax"):
        for f in (f"tutorial_{fw}.py", f"traps_{fw}.py"):
            assert f"gradviz/resources/examples/{f}" in names
    assert {"gradviz/resources/gradviz.svg", "gradviz/resources/gradviz.png"} <= names
    assert not any(n.startswith(("tests/", "resources/")) for n in names)
    import tarfile

    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {
        "resources/examples/tutorial_torch.py",
        "resources/gradviz.svg",
        "setup.py",
        "constraints.txt",
        "tests/conftest.py",
    } <= members


@pytest.mark.timeout(900)
def test_installed_wheel_lists_and_runs_builtin_examples(wheel_venv, tmp_path):
    """From a folder outside the checkout: the examples come from the installed package."""
    exe = [str(wheel_venv / "bin" / "gradviz")]
    env = _clean_env()
    version = _gradviz("--version", exe=exe, env=env, cwd=tmp_path)
    assert version.stdout == f"gradviz {gradviz.__version__}\n", version.stderr

    listed = _gradviz("list", exe=exe, env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for op in ("mul_weights", "mul_layer", "round_ste"):
        assert op in listed.stdout
    site_dir = subprocess.run(
        [
            str(wheel_venv / "bin" / "python"),
            "-c",
            "import gradviz, os; print(os.path.dirname(gradviz.__file__))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout.strip()
    assert site_dir.startswith(str(wheel_venv))  # the wheel's gradviz, not the checkout's

    report = tmp_path / "run.json"
    ran = _gradviz("run", "--json", report, exe=exe, env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    ops = json.loads(report.read_text())["ops"]
    # the venv sees this environment's packages: JAX's tutorial runs where JAX is installed
    assert {o["framework"] for o in ops} == {"torch", "tf"} | (
        {"jax"} if Framework.JAX.installed else set()
    )
    assert all(o["file"].startswith(site_dir + os.sep) for o in ops)

    # a trap's error keeps its traceback in the installed example, as in a checkout (installed
    # inside gradviz, the examples are still the user's frames)
    traps = Path(site_dir) / "resources" / "examples" / "traps_tf.py"
    trap_report = tmp_path / "traps.json"
    ran = _gradviz(
        "run",
        traps,
        "--op",
        "trap_assign_weights",
        "--framework",
        "tf",
        "--modes",
        "custom,default",
        "--json",
        trap_report,
        exe=exe,
        env=env,
        cwd=tmp_path,
    )
    assert ran.returncode == 3, ran.stderr[-2000:]
    [op] = json.loads(trap_report.read_text())["ops"]
    where = op["error"]["where"]
    assert where.startswith(f"{traps}:")
    assert f'File "{traps}", line {where.rpartition(":")[2]}' in op["error"]["traceback"]


@pytest.mark.timeout(900)
def test_installed_wheel_registers_the_pytest_plugin(wheel_venv, tmp_path):
    """`pytest --gradviz` from the wheel's entry point (pytest11), no -p: an op is an item."""
    (tmp_path / "ops.py").write_text(
        "import torch\n\n\nclass Double(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        return 2 * x\n\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return 2 * g\n"
    )
    proc = subprocess.run(
        [
            str(wheel_venv / "bin" / "python"),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rA",
            "--gradviz",
            "ops.py",
        ],
        capture_output=True,
        text=True,
        env=_clean_env(),
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "PASSED ops.py::Double[torch]" in proc.stdout
