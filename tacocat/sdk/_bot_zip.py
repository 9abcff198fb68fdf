"""A bot folder as the zip the arena takes: ``tacocat submit mybot/``.

Every plain file of the folder goes in, at the zip's root, except what is the author's
machine's alone: hidden files and folders, ``__pycache__`` and ``node_modules``, and the
programs a build step makes (ELF binaries of a folder whose ``bot.toml`` builds it: the
arena builds its own, for its own machine).
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Final

from tacocat.protocol.manifest import load_manifest

_SKIPPED_FOLDERS: Final = frozenset({"__pycache__", "node_modules"})


def zip_bot_folder(folder: Path) -> bytes:
    """The zip of ``folder``; raises :class:`~tacocat.protocol.manifest.ManifestError` for a
    folder that is no bot (no ``bot.toml`` or ``bot.py``, or a manifest that does not
    parse)."""
    manifest = load_manifest(folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs
                             if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
            for name in sorted(files):
                path = Path(root, name)
                if name.startswith(".") or path.is_symlink() or not path.is_file():
                    continue
                if manifest.build and _is_binary(path):
                    continue
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def _is_binary(path: Path) -> bool:
    with open(path, "rb") as stream:
        return stream.read(4) == b"\x7fELF"
