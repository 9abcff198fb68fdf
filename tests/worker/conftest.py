"""Fixtures of the worker tests: ``trees`` (real ``tacocat worker`` process trees, also
re-exported for tests/metrics) and those of the sandbox tests (``test_sandbox*.py``; their
helpers are ``sandbox_helpers.py``).

None is autouse: each sandbox test module asks for ``secrets_in_parent`` and
``no_leftover_cgroups`` for all its tests (``usefixtures``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tacocat.worker.sandbox import SandboxPolicy
from tacocat.worker.sandbox._cgroups import pids_base, tree_bases

from .sandbox_helpers import BOUNDS, POLICY, SECRET, Bots
from .worker_helpers import Trees


@pytest.fixture
def trees(redis_url: str, tmp_path: Path) -> Iterator[Trees]:
    """Starts ``tacocat worker`` trees on demand; fails if any process outlives them."""
    started = Trees(redis_url, tmp_path)
    yield started
    leftovers = list(started.close())
    assert not leftovers, f"processes outlived tacocat worker: {leftovers}"


@pytest.fixture(params=BOUNDS)
def policy(request: pytest.FixtureRequest) -> SandboxPolicy:
    return replace(POLICY, process_bound=request.param)


@pytest.fixture
def secrets_in_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's environment holds secrets; none may reach a bot."""
    monkeypatch.setenv("REDIS_URL", SECRET)
    monkeypatch.setenv("TACOCAT_ADMIN_TOKEN", "tok-hunter2")


@pytest.fixture
def bots(tmp_path: Path) -> Bots:
    root = tmp_path / "bots"
    root.mkdir()
    root.chmod(0o755)
    return Bots(root)


@pytest.fixture(scope="module")
def no_leftover_cgroups() -> Iterator[None]:
    yield
    base = pids_base()[0]
    for each in (base, *tree_bases()[0]) if base is not None else ():
        mine = [p.name for p in each.iterdir() if p.name.startswith(f"{os.getpid()}-")]
        assert not mine, f"cgroups left behind in {each}: {mine}"
