"""Big arrays cross from worker to parent through shared memory files, and leave none behind.

The files sit in a private scratch folder (engine.scratch); the attacks below are the ones that
worked on the old `/dev/shm/gradviz-{pid}-{n}.npy` names, tried as another user where the tests
run as root."""

import os
import socket
import stat
import subprocess
import sys
import threading
from multiprocessing.connection import Connection

import numpy as np
import pytest

from gradviz.engine import scratch, transport

NOBODY = 65534


def pair():
    a, b = socket.socketpair()
    return Connection(a.detach()), Connection(b.detach())


def leftovers():
    return os.listdir(transport.own_folder())


def as_other_user(fn) -> str:
    """Run fn() in a forked child as another uid; its result (a short string) comes back."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another local user")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the attacker
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            out = str(fn())
        except BaseException as exc:  # noqa: BLE001
            out = f"{type(exc).__name__}"
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        out = fh.read()
    os.waitpid(pid, 0)
    return out


def test_round_trip_small_big_and_shared_objects():
    left, right = pair()
    big = np.arange(transport.BIG // 8 * 3, dtype=np.float64)
    msg = (
        "ok",
        {
            "small": np.ones(3),
            "big": big,
            "again": big,
            "nan": np.array([np.nan] * 300000),
            "fortran": np.asfortranarray(np.arange(400 * 400.0).reshape(400, 400)),
        },
    )
    transport.send(left, msg)
    status, value = transport.recv(right)
    assert status == "ok"
    np.testing.assert_array_equal(value["small"], np.ones(3))
    np.testing.assert_array_equal(value["big"], big)
    np.testing.assert_array_equal(value["fortran"], np.arange(400 * 400.0).reshape(400, 400))
    assert value["again"] is value["big"]  # one file for one array object
    assert np.isnan(value["nan"]).all()
    value["big"][0] = -1.0  # copy-on-write: writable, file untouched
    assert value["big"][0] == -1.0 and big[0] == 0.0
    assert leftovers() == []


def test_arrays_sit_in_a_private_folder_as_private_files():
    left, _ = pair()
    transport.send(left, np.zeros(transport.BIG))  # never received
    folder = transport.own_folder()
    assert os.path.dirname(folder) == scratch.ROOT
    assert not os.path.basename(folder).endswith(f"gradviz-{os.getpid()}-")  # a random part
    st = os.lstat(folder)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    assert st.st_uid == os.geteuid()
    [name] = leftovers()
    assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600
    # Nobody else may look inside, let alone plant a file there.
    assert as_other_user(lambda: os.listdir(folder)) == "PermissionError"
    assert (
        as_other_user(lambda: os.symlink("/etc/passwd", os.path.join(folder, "9.npy")))
        == "PermissionError"
    )
    for n in leftovers():
        os.unlink(os.path.join(folder, n))


def test_symlinks_and_files_planted_at_the_old_names_are_never_touched(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.chmod(tmp_path, 0o755)
    os.chmod(victim, 0o644)
    old = [os.path.join(scratch.ROOT, f"gradviz-{os.getpid()}-{n}.npy") for n in range(64)]

    def plant():
        for i, path in enumerate(old):  # half symlinks to the victim, half world-writable files
            if i % 2:
                os.symlink(victim, path)
            else:
                fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o666)
                os.fchmod(fd, 0o666)
                os.close(fd)
        return "planted"

    try:
        assert as_other_user(plant) == "planted"
        left, right = pair()
        big = np.full(transport.BIG // 8 * 2, 7.0)
        for _ in range(3):
            transport.send(left, ("ok", big))
            status, got = transport.recv(right)
            np.testing.assert_array_equal(got, big)
        assert victim.read_text() == "precious"
        assert all(os.path.getsize(p) == 0 for p in old[::2])
    finally:
        for path in old:
            try:
                os.unlink(path)
            except OSError:
                pass


def test_a_symlink_at_the_next_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    nxt = next(transport._counter) + 1
    planted = [os.path.join(transport.own_folder(), f"{n}.npy") for n in range(nxt, nxt + 4)]
    for path in planted:
        os.symlink(victim, path)
    try:
        left, right = pair()
        big = np.full(transport.BIG // 8 * 2, 3.0)
        # The array travels inside the pickle, more than the socket holds: send from a thread.
        sender = threading.Thread(target=transport.send, args=(left, ("ok", big)))
        sender.start()
        np.testing.assert_array_equal(transport.recv(right)[1], big)
        sender.join()
        assert all(os.path.islink(p) for p in planted)
        assert victim.read_text() == "precious"
    finally:
        for path in planted:
            os.unlink(path)


@pytest.mark.parametrize("tamper", ["another owner", "world-writable", "symlink"])
def test_an_array_file_that_is_not_the_senders_own_is_refused(tamper, tmp_path):
    if tamper == "another owner" and os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    left, right = pair()
    transport.send(left, ("ok", np.full(transport.BIG // 8, 1.0)))
    [name] = leftovers()
    path = os.path.join(transport.own_folder(), name)
    if tamper == "another owner":
        os.chown(path, NOBODY, NOBODY)
    elif tamper == "world-writable":
        os.chmod(path, 0o666)
    else:
        np.save(tmp_path / "forged.npy", np.full(transport.BIG // 8, 42.0))
        os.unlink(path)
        os.symlink(tmp_path / "forged.npy", path)
    with pytest.raises(OSError):
        transport.recv(right)
    assert leftovers() == []


def test_stale_folders_of_dead_gradviz_processes_are_swept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = os.path.join(scratch.ROOT, f"gradviz-{dead.pid}-tf-stale")
    os.mkdir(stale, 0o700)
    open(os.path.join(stale, "crash.log"), "w").close()
    alive = scratch.new_folder("torch")  # this process's own
    target = tmp_path / "not-a-scratch-folder"
    target.mkdir(mode=0o700)
    link = os.path.join(scratch.ROOT, f"gradviz-{dead.pid}-link-x")
    os.symlink(target, link)
    theirs = os.path.join(scratch.ROOT, f"gradviz-{dead.pid}-theirs-x")
    try:
        if os.geteuid() == 0:
            assert as_other_user(lambda: os.mkdir(theirs, 0o700) or "made") == "made"
        scratch._swept.clear()
        removed = scratch.sweep_stale()
        assert stale in removed and not os.path.exists(stale)
        assert os.path.isdir(alive)  # this process is alive
        assert os.path.islink(link) and target.is_dir()  # a symlink is not ours to follow
        assert os.geteuid() != 0 or os.path.isdir(theirs)  # another user's is not ours to judge
        assert scratch.sweep_stale() == []  # once per process
    finally:
        scratch.remove(alive)
        scratch.remove(stale)
        os.unlink(link)
        if os.path.isdir(theirs):
            os.rmdir(theirs)
