"""The projection tables, declared with SQLModel, and the SQL that creates them.

This is where the projection schema is written. :data:`viewstore.projections.DDL` is the SQL
:func:`ddl` compiles from it, kept there as text so that opening a store does not import
SQLAlchemy (a fifth of a second of every command's start); a test holds the two equal. After
changing a table here, print the new text with ``python -m viewstore.schema`` and paste it there.
"""

from __future__ import annotations

from typing import Optional

from sqlalchemy import Index, text
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlmodel import Field, SQLModel

__all__ = ["ViewRow", "VersionRow", "VersionLogRow", "SnapshotRow", "TABLES", "ddl"]


class ViewRow(SQLModel, table=True):
    __tablename__ = "views"
    __table_args__ = (
        Index("views_live_name", "namespace", "name", unique=True, sqlite_where=text("live = 1")),
        Index("views_by_namespace", "live", "namespace", "name"),
        Index("views_by_name", "namespace", "name"),
    )
    view_id: str = Field(primary_key=True)
    namespace: str
    name: str
    live: int
    stream_version: int
    current_version_id: int
    properties: str
    security_mode: str
    creator: str
    created_at: int
    modifier: str
    modified_at: int
    last_position: int


class VersionRow(SQLModel, table=True):
    __tablename__ = "view_versions"
    view_id: str = Field(primary_key=True)
    version_id: int = Field(primary_key=True)
    timestamp_ms: int
    schema_id: int
    columns: str
    representations: str
    default_catalog: Optional[str] = None
    default_namespace: str
    summary: str


class VersionLogRow(SQLModel, table=True):
    __tablename__ = "view_version_log"
    view_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    timestamp_ms: int
    version_id: int


class SnapshotRow(SQLModel, table=True):
    __tablename__ = "view_snapshots"
    view_id: str = Field(primary_key=True)
    stream_version: int = Field(primary_key=True)
    occurred_at: int
    state: str


#: the projection tables, in the order their DDL creates them
TABLES = (ViewRow, VersionRow, VersionLogRow, SnapshotRow)


def ddl() -> str:
    """The SQL that creates the projection tables and their indexes (``IF NOT EXISTS``), as SQLite's
    dialect compiles it, one statement a line group, with no trailing blanks."""
    dialect = sqlite_dialect.dialect()
    statements = []
    for model in TABLES:
        table = model.__table__  # type: ignore[union-attr]  # SQLModel's metaclass adds it; its stubs do not say so
        statements.append(str(CreateTable(table, if_not_exists=True).compile(dialect=dialect)).strip() + ";")
        for index in sorted(table.indexes, key=lambda i: i.name):
            statements.append(str(CreateIndex(index, if_not_exists=True).compile(dialect=dialect)).strip() + ";")
    statements.append("DROP TABLE IF EXISTS projection;")  # schema 1 kept a position row here
    text_ = "\n".join(statements) + "\n"
    return "\n".join(line.rstrip().replace("\t", "    ") for line in text_.split("\n"))


if __name__ == "__main__":
    print(ddl(), end="")
