"""Training runs shared between sections: one section's run, reused by
another that needs the very same run (page 2's sections 3 and 4 both train
the batch-norm network at 0.1, 0.3, 1 and 3 with the same seeds).

``shared(function, args, code=...)`` returns ``function(*args)``. When the
runner that regenerates the pages (`make figures`, `make robustness`) has
set ``PAGEKIT_SHARED_RUNS`` to a folder, the result is kept there under a key
made of the function's name, its arguments, the code it runs (``code``: the
files, by their syntax tree as the section hashes count them, and pagekit's
modules that decide numbers, inputs.RESULT_MODULES), the locked
versions of the result packages, the numeric environment and torch's
thread count; a section that asks for the same key later reads it instead
of training again. A lock file per key makes a second section that asks
while the first is still training wait for it rather than train the run
twice, so the sharing holds when the two sections run side by side.

Without the variable (a notebook, a test, `make thread-check`, which must
train every run itself) nothing is kept or read. A result is written
atomically, so an interrupted run leaves no half-written entry; the key
covers everything the result depends on, so an entry is never stale, only
unused. The results are JSON: lists, numbers, None and booleans, which JSON
round-trips exactly.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from pagekit import numeric_env
from pagekit.atomic import write_json_atomically
from pagekit.inputs import RESULT_MODULES, code_content, result_pins
from pagekit.paths import PACKAGE_DIR

SHARED_RUNS_ENV = "PAGEKIT_SHARED_RUNS"


def run_key(function: Callable, args: tuple, code: Sequence[Path]) -> str:
    """sha256 over what a run's result depends on."""
    import torch  # already loaded by the section that trains

    digest = hashlib.sha256()
    digest.update(json.dumps([function.__module__, function.__qualname__, repr(args)]).encode() + b"\0")
    for path in [*code, *(PACKAGE_DIR / module for module in RESULT_MODULES)]:
        digest.update(hashlib.sha256(code_content(Path(path))).digest())
    digest.update(result_pins().encode() + b"\0")
    digest.update(numeric_env.fingerprint().encode() + b"\0")
    digest.update(f"torch threads {torch.get_num_threads()}".encode())
    return digest.hexdigest()


def shared(function: Callable[..., dict], args: tuple, *, code: Sequence[Path]) -> dict[str, Any]:
    """``function(*args)``, kept for and read from the other sections when
    the runner set PAGEKIT_SHARED_RUNS (see the module's docstring)."""
    folder = os.environ.get(SHARED_RUNS_ENV)
    if not folder:
        return function(*args)
    path = Path(folder) / f"{run_key(function, args, code)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        result = function(*args)
        write_json_atomically(path, result)
        return result
