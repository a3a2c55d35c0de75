"""`gradviz --install-desktop-entry` / `--uninstall-desktop-entry`: a launcher entry and the icon
in the user's XDG data folder ($XDG_DATA_HOME, else ~/.local/share), so gradviz starts from the
desktop's launcher like any other app. Per user, no root, nothing outside that folder.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from gradviz.bundled import ICON_PNG, ICON_SVG
from gradviz.errors import GradvizError

APP_ID = "gradviz"  # the desktop file's id; the app sets the same as its desktopFileName
COMMENT = "See every gradient of your custom backward beside the default and a numeric reference"


class DesktopEntryError(GradvizError):
    pass


def data_home() -> Path:
    xdg = os.environ.get("XDG_DATA_HOME", "")
    # the XDG spec: a relative path there is invalid and is ignored
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"


def installed_paths(home: Path | None = None) -> dict[str, Path]:
    home = data_home() if home is None else home
    icons = home / "icons" / "hicolor"
    return {
        "desktop": home / "applications" / f"{APP_ID}.desktop",
        "svg": icons / "scalable" / "apps" / f"{APP_ID}.svg",
        "png": icons / "256x256" / "apps" / f"{APP_ID}.png",
    }


def launcher_command() -> list[str]:
    """This installation's own `gradviz` (a pipx or venv install need not be on the launcher's
    PATH), else this Python running the package."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "gradviz" and script.is_file():
        return [str(script.absolute())]  # pipx's link in ~/.local/bin stays valid on upgrade
    beside = Path(sys.executable).parent / "gradviz"
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-m", "gradviz"]


def _exec_arg(arg: str) -> str:
    """One argument of an Exec key, quoted and escaped as the Desktop Entry spec says."""
    if arg and re.fullmatch(r"[A-Za-z0-9/._+,:=@-]+", arg):
        quoted = arg
    else:
        quoted = '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'
    # the key's value is itself an escaped string: backslashes doubled, % written %%
    return quoted.replace("\\", "\\\\").replace("%", "%%")


def desktop_file_text(command: list[str]) -> str:
    bad = [a for a in command if any(ord(c) < 32 or ord(c) == 127 for c in a)]
    if bad:  # a newline would end the Exec key and start keys of the path's making
        raise DesktopEntryError(
            f"cannot name {bad[0]!r} in a desktop entry: it holds a newline "
            "or another control character; install gradviz at a path "
            "without one"
        )
    exec_line = " ".join(_exec_arg(a) for a in command) + " %F"
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Version=1.4",
            f"Name={APP_ID}",
            "GenericName=Gradient inspector",
            f"Comment={COMMENT}",
            f"Exec={exec_line}",
            f"Icon={APP_ID}",
            "Terminal=false",
            "Categories=Development;",
            "Keywords=gradient;autograd;backward;pytorch;tensorflow;",
            "",
        ]
    )


def _write(path: Path, data: bytes) -> None:
    """Atomic: a launcher never reads half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _check_platform() -> None:
    if sys.platform in ("win32", "cygwin", "darwin"):
        raise DesktopEntryError(
            "desktop entries are for Linux desktops (XDG); on this system "
            "start gradviz from a terminal"
        )


def install() -> dict[str, Path]:
    _check_platform()
    if not os.path.isabs(os.environ.get("XDG_DATA_HOME", "")) and not Path.home().is_dir():
        raise DesktopEntryError(
            f"your home folder {Path.home()} does not exist (HOME); "
            "gradviz does not make one: set HOME or XDG_DATA_HOME"
        )
    command = launcher_command()
    paths = installed_paths()
    try:
        text = desktop_file_text(command)  # refused before anything is written
        _write(paths["svg"], ICON_SVG.read_bytes())
        _write(paths["png"], ICON_PNG.read_bytes())
        _write(paths["desktop"], text.encode("utf-8"))
    except OSError as exc:
        raise DesktopEntryError(f"cannot install the desktop entry: {exc}") from exc
    _refresh_caches(paths)
    return paths


def uninstall() -> list[Path]:
    """Removes what install() wrote; returns the files that were there."""
    _check_platform()
    removed = []
    for path in installed_paths().values():
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise DesktopEntryError(f"cannot remove {path}: {exc}") from exc
    _refresh_caches(installed_paths())
    return removed


def _refresh_caches(paths: dict[str, Path]) -> None:
    """Most launchers watch applications/ themselves; where the desktop keeps a cache, refresh it
    if its tool is installed. Best effort: the entry is valid without it."""
    tool = shutil.which("update-desktop-database")
    if tool and paths["desktop"].parent.is_dir():
        import subprocess

        try:
            subprocess.run(
                [tool, "-q", str(paths["desktop"].parent)],
                timeout=30,
                check=False,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            pass
