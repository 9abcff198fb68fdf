"""The build hook: wheels and ``pip install`` carry the compiled engine.

Everything about the package is in pyproject.toml; this file only adds one step to
``build_py``: compile the match runtime's hot modules (the engine's state machine and the
referee loop, listed in ``tacocat/engine/_compiled.py``) with mypyc in the package being built
(``tacocat.engine._compiled.build``, the same build ``./dev`` runs on the checkout), so a bot
author's ``pip install tacocat-arena`` plays games about a third faster. Without a C
compiler the step says why and the package installs as pure Python: the same games, slower.
Editable installs (``./dev``) skip it: ``scripts/compile_engine.py`` builds in the checkout.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution


class BuildPyWithCompiledEngine(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        package = Path(self.build_lib) / "tacocat"
        # By path: the package being built is not importable (and must not be imported).
        spec = importlib.util.spec_from_file_location("_tacocat_build",
                                                      package / "engine" / "_compiled.py")
        assert spec is not None and spec.loader is not None
        compiled = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(compiled)
        print("tacocat-arena: compiling the rules engine with mypyc", flush=True)
        failure = compiled.build(package)
        if failure:
            print(f"tacocat-arena: the engine stays pure Python (same games, slower): "
                  f"{failure[-500:]}", file=sys.stderr)


class PlatformDistribution(Distribution):
    """A wheel with the compiled engine is for this platform and Python only."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithCompiledEngine}, distclass=PlatformDistribution)
