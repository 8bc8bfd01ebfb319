"""Atomic file writes: a file is replaced whole or not at all, so an
interrupted run never leaves a half-written output or a temp file behind."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def atomic_write(path: Path, mode: str = "w"):
    """Write ``path`` through a temp file in the same folder, renamed into
    place only when writing succeeded: an interrupted run leaves the old file
    whole and no temp file behind. The file gets the usual permissions
    (0666 less the umask), not the temp file's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.NamedTemporaryFile(
        mode,
        dir=path.parent,
        prefix=f".{path.name}.",
        suffix=".tmp",
        delete=False,
        **({} if "b" in mode else {"encoding": "utf-8"}),
    )
    try:
        with tmp:
            yield tmp
        os.chmod(tmp.name, 0o666 & ~_umask())
        os.replace(tmp.name, path)
    except BaseException:
        os.unlink(tmp.name)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomically(path: Path, text: str) -> None:
    with atomic_write(path) as out:
        out.write(text)


def write_json_atomically(path: Path, data: Any) -> None:
    write_text_atomically(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
