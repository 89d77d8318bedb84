"""How the test suite builds its one SparkSession (importable by tests and benchmarks)."""

from __future__ import annotations

import logging
import os
from pathlib import Path


def build_session(root: Path, *, hive: bool = True):
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    root.mkdir(parents=True, exist_ok=True)
    log4j = root / "log4j2.properties"
    log4j.write_text("rootLogger.level = error\nrootLogger.appenderRef.stdout.ref = console\n"
                     "appender.console.type = Console\nappender.console.name = console\n"
                     "appender.console.target = SYSTEM_ERR\n"
                     "appender.console.layout.type = PatternLayout\n"
                     "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n")
    java_opts = (f"-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j.configurationFile=file:{log4j} "
                 f"-Dderby.system.home={root}")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("viewstore-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.warehouse.dir", str(root / "warehouse"))
        .config("spark.driver.extraJavaOptions", java_opts)
    )
    if hive:
        builder = (builder.enableHiveSupport()
                   .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                           f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        from pyspark.logger import PySparkLogger

        PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    except ImportError:  # older pyspark
        pass
    return session
