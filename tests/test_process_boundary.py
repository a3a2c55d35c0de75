"""The process boundary under attack: what a local attacker or a careless folder can plant, and
what a killed gradviz leaves behind. Real processes, real files in temporary folders."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OK = Path(__file__).resolve().parent / "corpus" / "ok"


def gradviz(*args, cwd, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "gradviz", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=cwd)


# --- the import path ----------------------------------------------------------------------------
def test_modules_planted_in_the_current_folder_are_not_imported(tmp_path):
    marker = tmp_path / "imported.txt"
    for name in ("numpy", "torch", "tensorflow", "keras"):
        (tmp_path / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
            f"raise ImportError('the planted {name}.py was imported')\n")
    proc = gradviz("run", OK / "layer_with_params_torch.py", OK / "layer_with_params_tf.py",
                   "--json", tmp_path / "r.json", cwd=tmp_path)
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    frameworks = {r["framework"] for r in report["ops"] if r["status"] == "ok"}
    assert frameworks == {"torch", "tf"}, report["ops"]
