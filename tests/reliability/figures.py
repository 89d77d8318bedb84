"""Where the reliability tests leave their figures (kills survived, operations, fuzz cases).

``python -m benchmarks --reliability`` runs these tests with ``VIEWSTORE_RELIABILITY_REPORT`` set to
a JSON file and copies the figures into the results; in a plain test run nothing is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def record(name: str, **figures: Any) -> None:
    target = os.environ.get("VIEWSTORE_RELIABILITY_REPORT")
    if not target:
        return
    path = Path(target)
    data = json.loads(path.read_text()) if path.exists() and path.read_text().strip() else {}
    data.setdefault(name, {}).update(figures)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
