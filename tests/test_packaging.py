"""The installed package (a real wheel, not the editable checkout) carries
its resources and its console command."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_resources_and_entry_point(tmp_path):
    # -v: pip passes on what the build backend prints
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                        "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    # a quiet set-up: no deprecated license table, no data folder missing from the packages
    build_log = r.stdout + r.stderr
    for noise in ("SetuptoolsDeprecationWarning", "is absent from the `packages` configuration",
                  "project.license` as a TOML table is deprecated"):
        assert noise not in build_log, noise
    wheel = next(tmp_path.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("explorer/resources/default/model.safetensors", "explorer/resources/default/tokenizer.json",
                   "explorer/resources/default/config.json", "explorer/resources/default/classes.json",
                   "explorer/resources/toy/robot.json", "explorer/resources/icon.svg", "explorer/cli/__init__.py",
                   "explorer/core/sources/__init__.py",
                   "explorer/core/sources/table.py", "explorer/core/tokens/inspection.py"):
        assert needed in names, needed
    # every package of the source tree ships (a view split into a package ships whole)
    for init in (ROOT / "explorer").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, init
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    assert "embedding-explorer = explorer.cli:main" in text
    # torch is a range, never a pin: installing the app keeps the user's torch
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    torch_req = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: torch")]
    assert len(torch_req) == 1 and "==" not in torch_req[0] and ">=" in torch_req[0] and "<" in torch_req[0]
    wheel_version = wheel.name.split("-")[1]
    # the installed copy opens the bundled model from its own resources
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    code = ("import explorer, explorer.core.sources as s; t = s.open_table('default'); "
            "print(s.resources_dir(), t.vocab_size, explorer.__version__)")
    env = dict(os.environ, PYTHONPATH=str(target))  # the unpacked wheel first, before the editable checkout
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=env)
    assert out.returncode == 0, out.stderr
    where, v, version = out.stdout.split()
    assert where.startswith(str(target)) and int(v) > 100
    assert version == wheel_version  # read from the installed metadata
