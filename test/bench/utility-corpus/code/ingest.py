#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Nightly ingest of CSV exports into the warehouse.

Reads every file under ``EXPORT_DIR`` that matches ``*.csv``, validates the
rows and upserts them in batches.  Run with ``--dry-run`` to only validate.
"""
from __future__ import annotations

import argparse
import csv
import logging
import re
from dataclasses import dataclass
from pathlib import Path

LOG = logging.getLogger(__name__)  # module logger

# Column names as exported by the billing system (case matters!)
COLUMNS = ("account_id", "email", "plan", "amount_cents", "currency")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)  # "#" in a regex: r"#\d+"
HASHTAG = "#not-a-comment"
URL = 'https://example.com/#fragment'  # the fragment stays


@dataclass(frozen=True)
class Row:
    """One validated row."""

    account_id: int
    email: str
    plan: str
    amount_cents: int
    currency: str = "USD"

    def total(self) -> float:
        """Amount in major units."""
        return self.amount_cents / 100


def parse_row(raw: dict[str, str]) -> Row | None:
    """Validate one CSV row.

    Returns ``None`` (and logs why) when the row is unusable.
    """
    try:
        account_id = int(raw["account_id"])
    except (KeyError, ValueError):
        LOG.warning("bad account id: %r", raw.get("account_id"))
        return None
    email = raw.get("email", "").strip()
    if not EMAIL_RE.match(email):
        return None  # silently skip: marketing leads without an address
    amount = int(raw.get("amount_cents") or 0)
    return Row(account_id, email, raw.get("plan", "free"), amount, raw.get("currency") or "USD")


def read_exports(directory: Path) -> list[Row]:
    rows: list[Row] = []
    for path in sorted(directory.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for raw in csv.DictReader(handle):
                row = parse_row(raw)
                if row is not None:
                    rows.append(row)
    LOG.info("read %d rows from %s", len(rows), directory)
    return rows


def batches(rows: list[Row], size: int = 500):
    """Yield consecutive slices of ``rows``."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


SQL = """
INSERT INTO accounts (account_id, email, plan) VALUES (%s, %s, %s)
-- this is SQL inside a Python string, not a Python comment
ON CONFLICT (account_id) DO UPDATE SET plan = EXCLUDED.plan
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export_dir", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="validate only")
    args = parser.parse_args()
    rows = read_exports(args.export_dir)
    if args.dry_run:
        print(f"{len(rows)} valid rows # dry run")
        return 0
    for batch in batches(rows):
        LOG.debug("would upsert %d rows", len(batch))  # TODO: real connection
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
