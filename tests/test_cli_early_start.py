"""cli/early_start.py: `gradviz run` starts the workers its files need before it imports the
rest of itself; cmd_run's Engine adopts them; what nobody adopts is stopped."""

import os
import subprocess
import sys
import time

import pytest

from gradviz.cli import early_start
from gradviz.cli.early_start import FLAGS, VALUED, read_run_args
from gradviz.cli.run_flags import run_parser


def test_its_options_are_run_parsers():
    """The options it reads past are exactly run_parser's: one it did not know would make it
    take a flag's neighbour for a file (or the reverse)."""
    flags, valued = set(), set()
    for action in run_parser()._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                (flags if action.nargs == 0 else valued).add(opt)
    assert flags - {"--verbose"} == FLAGS  # --verbose: left to cmd_run on purpose
    assert valued == VALUED


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["a.py", "--op", "x", "b.py", "--quiet"], (["a.py", "b.py"], "all")),
        (["--framework", "tf", "a.py"], (["a.py"], "tf")),
        (["--framework=torch", "--range", "-3,3", "a.py"], (["a.py"], "torch")),
        (["--shape", "200", "--", "-odd.py"], (["-odd.py"], "all")),
        (["--quiet"], None),  # no files: the built-in examples, started by cmd_run
        (["a.py", "--verbose"], None),  # the workers' environment changes first
        (["a.py", "-h"], None),
        (["a.py", "--qui"], None),  # an abbreviation: argparse's to answer
        (["a.py", "--op"], None),  # a value missing
    ],
)
def test_argv_as_run_parser_reads_it(args, expected):
    assert read_run_args(args) == expected


def _gone(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_started_workers_are_handed_over_or_stopped(write_module):
    torch_file = write_module("t.py", "import torch\n")
    early_start.start(["run", torch_file, "--quiet"])
    try:
        worker = early_start.taken(("torch", "tf"))["torch"]
        assert early_start.taken(("torch", "tf")) == {}  # handed over once, tf never started
        pid = worker.pid()
        assert pid
    finally:
        early_start.discard()
    worker.stop()
    assert _gone(pid)

    early_start.start(["run", torch_file])
    pid = early_start._started["torch"].pid()
    early_start.discard()  # a usage error found later: nobody took it
    assert early_start._started == {}
    assert _gone(pid)


def test_a_run_uses_the_workers_it_started_first(tmp_path):
    """A fresh `gradviz run` process: numpy (the command line's first heavy import) comes after
    the worker was started, and the run goes through (the Engine adopted the started worker:
    one worker process in all)."""
    op = tmp_path / "op.py"
    op.write_text(
        "import torch\nimport gradviz\n\n\n@gradviz.op(name='double')\n"
        "class Double(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
    )
    probe = (
        "import sys, subprocess\n"
        "from gradviz.engine import worker\n"
        "seen = []\n"
        "real = subprocess.Popen\n"
        "def spy(argv, *a, **k):\n"
        "    if any('child_main' in str(x) for x in argv):  # a worker, not the janitor\n"
        "        seen.append('numpy' in sys.modules)\n"
        "    return real(argv, *a, **k)\n"
        "subprocess.Popen = spy\n"
        "from gradviz.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('SPAWNS', seen)\n"
        "sys.exit(code)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", probe, "run", str(op), "--shape", "4", "--modes", "custom"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert p.returncode == 0, p.stderr
    assert "double" in p.stdout
    spawns = next(line for line in p.stdout.splitlines() if line.startswith("SPAWNS"))
    assert spawns == "SPAWNS [False]"  # one worker, started before numpy was imported
