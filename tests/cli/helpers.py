"""Running the ``tacocat`` command as a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_AMBIENT = ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS", "REDIS_URL")


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any tacocat setting of whoever runs the tests."""
    env = {k: v for k, v in os.environ.items() if k not in _AMBIENT}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def tacocat(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
            timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tacocat.cli", *args], cwd=cwd,
                          env=dict(env) if env is not None else clean_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)
