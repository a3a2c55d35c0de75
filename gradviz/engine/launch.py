"""The command line that starts a worker: an isolated interpreter that imports only what it needs.

`python -I` leaves the current folder (and PYTHONPATH, the user site folder) off `sys.path`, so a
`numpy.py` in the folder gradviz was started from is never imported by a worker. The bootstrap
then adds back only what is needed: this very gradviz package (loaded from its folder, so the
worker runs the parent's gradviz whether it is installed, editable or a plain checkout), the
absolute entries of the user's PYTHONPATH, and the user site folder where the parent uses it.
The user's own files add their folders later (backends.user_modules).
"""

from __future__ import annotations

import os
import site
import sys

import gradviz

PACKAGE_DIR = os.path.dirname(os.path.abspath(gradviz.__file__))

_BOOTSTRAP = f"""\
import sys
package, front, sites = sys.argv[1:4]
del sys.argv[1:4]
sys.path[:0] = [p for p in front.split({os.pathsep!r}) if p]
if sites:
    import site
    for folder in sites.split({os.pathsep!r}):
        site.addsitedir(folder)
from importlib.util import module_from_spec, spec_from_file_location
spec = spec_from_file_location("gradviz", package + {os.sep + "__init__.py"!r},
                               submodule_search_locations=[package])
sys.modules["gradviz"] = module = module_from_spec(spec)
spec.loader.exec_module(module)
from gradviz.engine.child import child_main
child_main()
"""


def worker_command(args: list[str]) -> list[str]:
    """argv of a worker process; `args` reach child.child_main as sys.argv[1:]. A parent that
    writes no bytecode (-B, PYTHONDONTWRITEBYTECODE, which -I would drop) has workers that write
    none either, gradviz's own included (engine/own_bytecode.py)."""
    flags = ["-I", "-B"] if sys.dont_write_bytecode else ["-I"]
    return [
        sys.executable,
        *flags,
        "-c",
        _BOOTSTRAP,
        PACKAGE_DIR,
        os.pathsep.join(python_path()),
        os.pathsep.join(user_sites()),
        *args,
    ]


def python_path() -> list[str]:
    """The user's PYTHONPATH, absolute entries only: an empty or relative one means the current
    folder, which is exactly what a worker must not import from."""
    raw = os.environ.get("PYTHONPATH", "")
    return [p for p in raw.split(os.pathsep) if p and os.path.isabs(p)]


def user_sites() -> list[str]:
    """The user site-packages folder, where this interpreter uses it (pip install --user)."""
    try:
        folder = site.getusersitepackages()
    except (AttributeError, OSError):
        return []
    return [folder] if site.ENABLE_USER_SITE and folder in sys.path else []
