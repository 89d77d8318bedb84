"""How the test suite builds its one SparkSession (importable by tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path


def build_session(root: Path, *, hive: bool = True):
    """The demo's quiet, fast local session; Hive-enabled (embedded Derby) unless ``hive=False``."""
    from viewstore.spark.demo import local_session

    return local_session(root, app_name="viewstore-tests", hive=hive)
