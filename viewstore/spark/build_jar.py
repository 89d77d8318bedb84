"""Build the jar of viewstore's Spark catalog: ``python -m viewstore.spark.build_jar``.

The Java sources in ``viewstore/spark/java`` are compiled with ``javac --release 17`` against the
jars of the installed pyspark (nothing else is needed) and packed, byte for byte reproducibly, into
``viewstore/spark/jars/viewstore-spark-catalog.jar``. The jar carries ``META-INF/viewstore/build.json``
with the SHA-256 of the sources and the Spark version it was compiled against, so a test can tell
when the committed jar is stale and :func:`viewstore.spark.attach` can refuse a Spark minor version
the jar was not built for.

Users never run this: the built jar ships inside the Python package. Developers run it after
editing a ``.java`` file, or with ``--check`` to see whether the jar is stale (exit status 1).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["SOURCE_DIR", "JAR_PATH", "BUILD_INFO", "source_digest", "jar_info", "build", "main"]

_HERE = Path(__file__).resolve().parent
#: the Java sources (package ``io.viewstore.spark``)
SOURCE_DIR = _HERE / "java"
#: the built jar, committed and shipped as package data
JAR_PATH = _HERE / "jars" / "viewstore-spark-catalog.jar"
#: where in the jar the build record lives
BUILD_INFO = "META-INF/viewstore/build.json"
#: javac's target: the oldest Java that Spark 4 runs on
JAVA_RELEASE = 17
#: zip entries get this fixed time so that the same sources give the same jar
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _sources() -> list[Path]:
    return sorted(SOURCE_DIR.rglob("*.java"))


def source_digest() -> str:
    """The SHA-256 over every Java source (relative path and bytes), in path order."""
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(path.relative_to(SOURCE_DIR).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def jar_info(jar: Path = JAR_PATH) -> dict[str, Any]:
    """The build record stored in ``jar`` (source digest, Spark version, Java release).

    Raises:
        FileNotFoundError: the jar does not exist.
        KeyError: the jar has no build record.
    """
    with zipfile.ZipFile(jar) as zf:
        info: dict[str, Any] = json.loads(zf.read(BUILD_INFO))  # the object build() wrote
    return info


def _pyspark_jars() -> tuple[Path, str]:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir():
        raise SystemExit(f"the installed pyspark has no jars folder ({jars}); install pyspark from PyPI")
    return jars, pyspark.__version__


def build(out: Path = JAR_PATH) -> dict[str, Any]:
    """Compile the sources against the installed pyspark's jars and write the jar.

    Returns:
        The build record written into the jar.

    Raises:
        SystemExit: javac is missing or the compilation failed.
    """
    javac = shutil.which("javac")
    if javac is None:
        raise SystemExit("javac (JDK 17 or later) is needed to build the jar")
    jars, spark_version = _pyspark_jars()
    sources = _sources()
    info = {"source_sha256": source_digest(), "spark_version": spark_version,
            "spark_minor": ".".join(spark_version.split(".")[:2]), "java_release": JAVA_RELEASE}
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp)
        cmd = [javac, "--release", str(JAVA_RELEASE), "-Xlint:all,-path", "-Werror", "-encoding", "UTF-8",
               "-cp", str(jars / "*"), "-d", str(classes), *map(str, sources)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"javac failed:\n{result.stdout}{result.stderr}")
        entries: dict[str, bytes] = {
            "META-INF/MANIFEST.MF": (f"Manifest-Version: 1.0\r\nCreated-By: viewstore.spark.build_jar\r\n"
                                     f"Implementation-Title: viewstore-spark-catalog\r\n"
                                     f"Spark-Version: {spark_version}\r\n\r\n").encode(),
            BUILD_INFO: (json.dumps(info, indent=2, sort_keys=True) + "\n").encode(),
        }
        for path in sorted(classes.rglob("*.class")):
            entries[path.relative_to(classes).as_posix()] = path.read_bytes()
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".tmp")
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in entries.items():
                entry = zipfile.ZipInfo(name, date_time=_EPOCH)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o644 << 16
                zf.writestr(entry, data)
        partial.replace(out)
    return info


def main(argv: list[str] | None = None) -> int:
    """Command line: build the jar, or with ``--check`` report whether it is stale."""
    parser = argparse.ArgumentParser(prog="python -m viewstore.spark.build_jar", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the jar is missing or stale, build nothing")
    args = parser.parse_args(argv)
    if args.check:
        try:
            built = jar_info()["source_sha256"]
        except (FileNotFoundError, KeyError):
            print(f"{JAR_PATH.name}: missing or without a build record")
            return 1
        if built != source_digest():
            print(f"{JAR_PATH.name} is stale: rebuild with python -m viewstore.spark.build_jar")
            return 1
        print(f"{JAR_PATH.name} is up to date")
        return 0
    info = build()
    print(f"built {JAR_PATH.name} against Spark {info['spark_version']} (sources {info['source_sha256'][:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
