"""Shared fixtures: a fresh store on a real SQLite file, the conformance data, one SparkSession, and
for the tests of viewstore.spark's calls a database with an orders table and a fresh database name."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CONFORMANCE = SHARED / "conformance"
sys.path.insert(0, str(Path(__file__).parent))
# Child processes (the crash and load workers, the CLI run as a program) import the library of this
# checkout too, not whichever one the environment's install points at.
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

from spark_views import ORDERS, _name  # noqa: E402 - found through the path set above

# Hypothesis writes a .hypothesis folder (its example database, cached constants and character
# maps) into the working directory, which is the user's checkout. Unless HYPOTHESIS_STORAGE_DIRECTORY
# names a folder for it, a folder of this run's own takes it, removed when the run ends; as nothing
# is kept between runs, no example database is written. Each test's own settings keep their number
# of examples.
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    _HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="viewstore-hypothesis-")
    atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
    set_hypothesis_home_dir(_HYPOTHESIS_HOME)
    settings.register_profile("viewstore", database=None)
    settings.load_profile("viewstore")


@pytest.fixture
def store(tmp_path):
    from viewstore import ViewStore

    s = ViewStore(tmp_path / "views.db", catalog="prod", actor="alice")
    yield s
    s.close()


@pytest.fixture(scope="session")
def conformance() -> Path:
    assert CONFORMANCE.is_dir(), f"the conformance data must sit beside the checkout: {CONFORMANCE}"
    return CONFORMANCE


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One Hive-enabled local SparkSession for the whole run (an embedded Derby metastore).

    The settings are the fast, quiet ones measured on these machines; see tests/spark_settings.py.
    """
    from spark_settings import build_session

    session = build_session(tmp_path_factory.mktemp("spark"))
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data(spark):
    """A database with an orders table, shared by the module's tests (they only read it)."""
    db = _name()
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(ORDERS.format(db=db))
    yield db
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


@pytest.fixture
def ns(spark):
    """A fresh database name for one test's views; dropped afterwards."""
    db = _name()
    yield db
    spark.catalog.setCurrentDatabase("default")
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
