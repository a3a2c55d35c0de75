"""engine.import_gc: a framework package imports with the cyclic collector paused, then frozen;
everything else (the user's own code around it, other packages) sees the collector as it was.

Run in a fresh interpreter with stand-in packages first on sys.path: `optax` is one of the
framework import roots (vocab.Framework.JAX), `plainpkg` is not."""

import json
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import gc, json, sys
    sys.path.insert(0, sys.argv[1])
    from gradviz.engine import import_gc

    import_gc.install()
    frozen_before = gc.get_freeze_count()
    import plainpkg
    import optax
    out = {
        "during_framework": optax.SEEN,
        "during_plain": plainpkg.SEEN,
        "after": gc.isenabled(),
        "loader": type(optax.__loader__).__name__,
        "spec_loader": type(optax.__spec__.loader).__name__,
        "frozen_grew": gc.get_freeze_count() > frozen_before,
    }
    try:
        import equinox
    except ZeroDivisionError:
        out["failed_import_raised"] = True
    out["after_failed"] = gc.isenabled()
    gc.disable()
    import flax
    out["off_stays_off"] = not gc.isenabled()
    print(json.dumps(out))
    """
)


@pytest.fixture
def stand_ins(tmp_path):
    for name, body in {
        "optax": "import gc\nSEEN = gc.isenabled()\n",
        "plainpkg": "import gc\nSEEN = gc.isenabled()\n",
        "equinox": "1 / 0\n",
        "flax": "",
    }.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
    return tmp_path


def test_a_framework_imports_paused_and_frozen_the_rest_as_it_was(stand_ins):
    p = subprocess.run(
        [sys.executable, "-c", PROBE, str(stand_ins)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["during_framework"] is False  # paused while the framework's own code ran
    assert out["during_plain"] is True  # another package: as it was
    assert out["after"] is True  # never left off
    assert out["frozen_grew"] is True
    # the module sees its real loader, not the wrapper
    assert out["loader"] == out["spec_loader"] == "SourceFileLoader"
    assert out["failed_import_raised"] is True  # the framework's own error, unchanged
    assert out["after_failed"] is True
    assert out["off_stays_off"] is True  # a collector the caller turned off is not turned on


def test_find_spec_of_a_framework_answers_as_its_own_loader(stand_ins):
    """importlib.util.find_spec before the import (libraries probe for frameworks this way): the
    spec's loader answers as the real one does."""
    script = textwrap.dedent(
        """
        import importlib.util, sys
        sys.path.insert(0, sys.argv[1])
        from gradviz.engine import import_gc

        import_gc.install()
        spec = importlib.util.find_spec("optax")
        print(spec.loader.is_package("optax"), spec.origin.endswith("__init__.py"))
        """
    )
    p = subprocess.run(
        [sys.executable, "-c", script, str(stand_ins)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "True"]
