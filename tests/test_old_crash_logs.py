"""Crash logs that older gradviz versions left at /tmp/gradviz-{torch,tf}-XXXXXXXX.log (mkstemp,
no pid in the name) are swept at start once no live process holds them open: only this user's
regular files, never a symlink's target, never another user's file."""

import os
import subprocess
import sys
import tempfile

from gradviz.engine import scratch

NOBODY = 65534


def old_log(root, framework, tag, age_s=3600.0) -> str:
    path = os.path.join(root, f"gradviz-{framework}-{tag}.log")
    with open(path, "w") as fh:
        fh.write("Fatal Python error: Segmentation fault\n")
    os.chmod(path, 0o600)
    then = os.stat(path).st_mtime - age_s
    os.utime(path, (then, then))
    return path


def test_old_crash_logs_of_gone_workers_are_swept(tmp_path):
    root = tmp_path / "tmp"
    root.mkdir(mode=0o1777)  # like /tmp: anyone may create, only owners remove
    os.chmod(root, 0o1777)
    dead = old_log(root, "torch", "k3x_9abq")
    dead_tf = old_log(root, "tf", "0aj2mzz1")
    fresh = old_log(root, "tf", "q9w8e7r6", age_s=0)  # its gradviz may be reading it
    held = old_log(root, "torch", "held1234")
    target = old_log(tmp_path, "torch", "target00")  # outside the swept folder
    link = os.path.join(root, "gradviz-torch-link0000.log")
    os.symlink(target, link)
    other = old_log(root, "tf", "theirs00")
    if os.geteuid() == 0:
        os.chown(other, NOBODY, NOBODY)
    unrelated = old_log(root, "jax", "abcdefgh")  # not a gradviz worker's name
    # the worker that writes `held` is alive: it holds the log open, as old workers did
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; f = open(sys.argv[1], 'a'); print('open', flush=True); sys.stdin.read()",
            held,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline() == "open\n"
        removed = scratch.sweep([str(root)])
        assert sorted(removed) == sorted([dead, dead_tf])
        for kept in (fresh, held, link, target, other, unrelated):
            assert os.path.lexists(kept), kept
        assert os.path.islink(link)
    finally:
        writer.stdin.close()
        writer.wait()
    assert scratch.sweep([str(root)]) == [held]  # its writer is gone now


def test_sweep_at_start_removes_them_from_the_temp_folder():
    path = old_log(tempfile.gettempdir(), "torch", os.urandom(4).hex())
    scratch._swept.clear()
    scratch.sweep_stale()
    assert not os.path.exists(path)  # (another gradviz starting meanwhile may have swept it)
