"""`make golden`: pin the current numbers of every section as the golden record.

Copies each section's quotes (raw value, text, tolerances) from
figures/<page>/numbers/<section>.json to tests/golden/<page>/<section>.json.
Run it only after inspecting the new numbers: the tests compare against it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "docs" / "diagrams"))

from check_page import GOLDEN_DIR  # noqa: E402
from page_registry import page_config, page_packages, section_scripts  # noqa: E402
from section_kit import write_json_atomically  # noqa: E402


def main() -> int:
    for package in page_packages():
        config = page_config(package)
        for script in section_scripts(package):
            numbers = REPO_ROOT / "figures" / config.PAGE / "numbers" / f"{script}.json"
            if not numbers.exists():
                print(f"error: {numbers.relative_to(REPO_ROOT)} is missing: run `make figures` first",
                      file=sys.stderr)
                return 2
            quotes = json.loads(numbers.read_text(encoding="utf-8"))["quotes"]
            golden = GOLDEN_DIR / config.PAGE / f"{script}.json"
            old = json.loads(golden.read_text(encoding="utf-8"))["quotes"] if golden.exists() else {}
            changed = sorted(name for name in quotes.keys() | old.keys() if quotes.get(name) != old.get(name))
            write_json_atomically(golden, {"quotes": quotes})
            print(f"{golden.relative_to(REPO_ROOT)}: {len(quotes)} quotes, {len(changed)} changed"
                  + (f" ({', '.join(changed[:8])}{', ...' if len(changed) > 8 else ''})" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
