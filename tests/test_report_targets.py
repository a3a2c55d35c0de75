"""Writing a report never destroys what sits at its path (issue 26, item 2): only a regular file
is replaced (atomically), a link is followed to the file it names, a FIFO or pipe is written
through; a long name still gets a temp file; and `gradviz run` refuses, before any worker
starts, an empty output path, an output that is one of its op files, and two outputs at one
file."""

import json
import os
import stat

import pytest

from gradviz.cli import main
from gradviz.model import RunSettings
from gradviz.report import write_json, write_npz


def _read_all(fd) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there: the writer's open goes on
    try:
        write_json(str(fifo), [], RunSettings(seed=5))
        data = _read_all(r)  # the whole small report is in the pipe's buffer
    finally:
        os.close(r)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert json.loads(data)["settings"]["seed"] == 5
    assert os.listdir(tmp_path) == ["report.json"]  # no temp file left beside it


def test_a_pipe_named_by_dev_fd_gets_the_report(tmp_path):
    r, w = os.pipe()
    try:
        write_json(f"/dev/fd/{w}", [], RunSettings(seed=9))  # as `--json >(jq .)` names it
        os.close(w)
        w = None
        assert json.loads(_read_all(r))["settings"]["seed"] == 9
    finally:
        os.close(r)
        if w is not None:
            os.close(w)


def test_a_link_stays_a_link_and_its_file_is_replaced(tmp_path):
    real = tmp_path / "real.npz"
    real.write_bytes(b"old")
    link = tmp_path / "out.npz"
    link.symlink_to(real)
    write_npz(str(link), [])
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes()[:2] == b"PK"  # the NPZ (a zip) is in the file
    assert sorted(os.listdir(tmp_path)) == ["out.npz", "real.npz"]


def test_a_long_name_gets_a_temp_file_within_the_limit(tmp_path):
    path = tmp_path / ("r" * 245 + ".json")  # 250 characters, under NAME_MAX
    write_json(str(path), [], RunSettings())
    assert json.loads(path.read_text())["settings"]["seed"] == 0
    assert os.listdir(tmp_path) == [path.name]


OP = (
    "import torch\n\nclass Double(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        return 2 * x\n"
    "    @staticmethod\n    def backward(ctx, g):\n        return 2 * g\n"
)


@pytest.mark.parametrize(
    "flags, said",
    [
        (["--json", "{op}"], "--json {op}: that is the op file"),
        (["--npz", "{link}"], "--npz {link}: that is the op file"),
        (["--json", "{out}", "--npz", "{out}"], "--npz {out}: --json writes that file already"),
        (["--json", ""], "--json '': the path is empty"),
        (["--npz", " "], "--npz ' ': the path is empty"),
    ],
)
def test_outputs_that_would_destroy_an_input_or_each_other_are_refused(
    tmp_path, capsys, flags, said
):
    op = tmp_path / "ops.py"
    op.write_text(OP)
    link = tmp_path / "link.py"
    link.symlink_to(op)
    names = {"op": str(op), "link": str(link), "out": str(tmp_path / "out.bin")}
    code = main(["run", str(op), "--modes", "custom", *[f.format(**names) for f in flags]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert said.format(**names) in err
    assert op.read_text() == OP  # the op file is untouched
    assert sorted(os.listdir(tmp_path)) == ["link.py", "ops.py"]


def test_outputs_may_share_a_device():
    from gradviz.cli.outputs import output_problems

    assert output_problems([("--json", "/dev/null"), ("--npz", "/dev/null")], []) == []
