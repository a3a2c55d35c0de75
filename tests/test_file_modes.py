"""Report and figure files get the mode a plain write would give (issue 11, item 13): a new file
follows the umask, a replaced file keeps its mode; never mkstemp's private 0600 by accident."""

import os
import stat

import pytest
from samples import ste_result

from gradviz import report
from gradviz.model import RunSettings


@pytest.fixture
def umask():
    old = os.umask(0o022)
    yield lambda m: os.umask(m)
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _write_all(folder):
    r = ste_result("torch")
    report.write_json(folder / "r.json", [r], RunSettings())
    report.write_npz(folder / "r.npz", [r])
    report.write_csv(folder / "x.csv", r.tensor("x"))
    from gradviz.qt.export import save_grid

    save_grid([r], str(folder / "g.png"), comparisons=None)
    return ["r.json", "r.npz", "x.csv", "g.png"]


def test_new_files_follow_the_umask(qapp, tmp_path, umask):
    umask(0o022)
    for name in _write_all(tmp_path):
        assert _mode(tmp_path / name) == 0o644, name
    umask(0o027)
    other = tmp_path / "b"
    other.mkdir()
    for name in _write_all(other):
        assert _mode(other / name) == 0o640, name
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temp file left


def test_replaced_files_keep_their_mode(qapp, tmp_path, umask):
    umask(0o077)
    names = ["r.json", "r.npz", "x.csv", "g.png"]
    for i, name in enumerate(names):
        (tmp_path / name).write_text("old")
        os.chmod(tmp_path / name, (0o644, 0o664, 0o600, 0o640)[i])
    _write_all(tmp_path)
    assert [_mode(tmp_path / n) for n in names] == [0o644, 0o664, 0o600, 0o640]
    assert (tmp_path / "r.json").read_text().startswith("{")  # really replaced
