"""The desktop entry writes only what it should (issue 26, minor): a newline in the install
path ended the Exec key and injected keys of the path's making; a missing $HOME was created."""

import pytest

from gradviz import desktop_entry


def test_a_newline_in_the_install_path_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    evil = str(tmp_path / "bin\nExec=touch pwned\n/gradviz")
    monkeypatch.setattr(desktop_entry, "launcher_command", lambda: [evil])
    with pytest.raises(desktop_entry.DesktopEntryError, match="newline"):
        desktop_entry.install()
    assert not (tmp_path / "data").exists()


def test_a_missing_home_is_not_created(tmp_path, monkeypatch):
    home = tmp_path / "no-such-home"
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(desktop_entry.DesktopEntryError, match="does not exist"):
        desktop_entry.install()
    assert not home.exists()
