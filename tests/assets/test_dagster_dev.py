"""``dagster dev`` from the project root serves the asset graph and stops cleanly (the check script)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dagster_dev_check.sh"


@pytest.mark.slow
def test_dagster_dev_serves_the_asset_graph() -> None:
    done = subprocess.run([str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = done.stdout.split("asset keys:")[1].split()
    assert "tech/evaluation" in keys and "tech/result" in keys and "tech/corpus" in keys
    assert "tech_expansion/evaluation" in keys and "sample/answer" in keys and "sample/corpus" in keys
    assert done.stdout.rstrip().endswith("stopped cleanly")
