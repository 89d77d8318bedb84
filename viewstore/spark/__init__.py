"""viewstore in PySpark drivers (classic PySpark, py4j): the spark extra (:data:`~viewstore.errors.INSTALL_SPARK`).

The names below are imported lazily, so ``import viewstore.spark`` works without pyspark and a
missing pyspark surfaces as :class:`~viewstore.errors.NotInstalledError` on first use.

Besides the errors each function lists, any of them may raise what a call of the store may
(:class:`~viewstore.catalog.ViewStore`: a closed store, say).

Modules:
    register        register_views: the stored views as persistent views of the session catalog
    ddl             create_view and sql: view DDL in Spark SQL, stored, then mirrored into the session
    audit           events_dataframe: the event log as a typed DataFrame, through Arrow
    drift           check_views: do the stored views still analyze to their stored columns?
    session         what those four share: the cloned work session, configs, the copy statement
    types           Spark <-> Iceberg type mapping
    metastore       reading and writing raw Hive-metastore records through a Hive-enabled session
    catalog_plugin  attach(): viewstore as a Spark 4.3 ViewCatalog (Spark SQL view DDL on the store)
    failures        Spark's refusals (ValidationError) told from the engine's failures (EngineError)
    cli             the ``viewstore spark`` and ``viewstore demo`` commands
    demo            the end-to-end demo pipeline behind ``viewstore demo``
    build_jar       rebuilds the catalog's jar from its Java source
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import INSTALL_SPARK, NotInstalledError

if TYPE_CHECKING:  # the lazy names' real types, for type checkers (at run time __getattr__ imports them)
    # "name as name" exports each one: mypy cannot read __all__ below (it is computed), so under
    # --strict (no implicit re-export) a caller's `from viewstore.spark import sql` would be an error
    from .audit import events_dataframe as events_dataframe
    from .catalog_plugin import attach as attach, detach as detach
    from .ddl import create_view as create_view, sql as sql
    from .demo import run_demo as run_demo
    from .drift import DriftReport as DriftReport, check_views as check_views
    from .metastore import (import_metastore_views as import_metastore_views,
                            read_metastore_table as read_metastore_table,
                            write_metastore_table as write_metastore_table)
    from .register import RegisterReport as RegisterReport, register_views as register_views
    from .types import iceberg_to_spark as iceberg_to_spark, spark_to_iceberg as spark_to_iceberg

_EXPORTS = {
    "register_views": "register",
    "create_view": "ddl",
    "sql": "ddl",
    "events_dataframe": "audit",
    "check_views": "drift",
    "RegisterReport": "register",
    "DriftReport": "drift",
    "spark_to_iceberg": "types",
    "iceberg_to_spark": "types",
    "read_metastore_table": "metastore",
    "import_metastore_views": "metastore",
    "write_metastore_table": "metastore",
    "attach": "catalog_plugin",
    "detach": "catalog_plugin",
    "run_demo": "demo",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'viewstore.spark' has no attribute {name!r}")
    try:
        mod = importlib.import_module(f".{module}", __name__)
    except ImportError as e:
        if (e.name or "").split(".")[0] in ("pyspark", "py4j", "pyarrow"):
            raise NotInstalledError(
                f"viewstore.spark.{name} needs pyspark and pyarrow ({e}); {INSTALL_SPARK}") from e
        raise
    return getattr(mod, name)
