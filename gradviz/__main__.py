import os
import sys

# `python -m gradviz` puts the current folder first on sys.path; a numpy.py lying there must not
# be imported by gradviz itself (gradviz is imported already; the workers start isolated).
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from gradviz.cli import main  # noqa: E402

sys.exit(main())
