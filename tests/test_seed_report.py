"""The committed seed report is current, and every every-seed claim holds at
seed offsets 0, 1 and 2: the page's "Across three seeds" paragraph relies on it."""

from __future__ import annotations

from conftest import REPO_ROOT

import seed_report


def test_seed_report_is_current_and_every_claim_holds():
    reports = seed_report.build_reports([0, 1, 2])
    for page, (text, summary, failures) in reports.items():
        assert failures == 0, f"claims fail at some seed:\n{summary}"
        path = seed_report.report_path(page)
        assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make seeds`"
        assert path.read_text(encoding="utf-8") == text, f"{path.relative_to(REPO_ROOT)} is stale: run `make seeds`"
