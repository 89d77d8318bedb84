"""viewstore: an embedded, event-sourced catalog of multi-dialect SQL views.

Quick start::

    from viewstore import ViewStore, Column, SQLRepresentation

    store = ViewStore("views.db", catalog="prod", actor="alice")
    store.create_view("sales.daily_orders",
                      columns=[Column("day", "date"), Column("orders", "bigint")],
                      representations=[SQLRepresentation("spark", "SELECT ...")],
                      default_namespace="sales")
"""

from .catalog import (DROP_DIALECT_ALLOWED, AsOf, ColumnDict, ColumnLike, EventTypes, RepresentationDict,
                      RepresentationLike, RepresentationsLike, TimeLike, ViewChange, ViewStore)
from .errors import (ConcurrencyError, CorruptLogError, DamagedProjectionsError, EngineError, IcebergMetadataError,
                     NoSuchViewError, NotInstalledError, ValidationError, ViewAlreadyExistsError, ViewStoreError)
from .events import Event
from .model import (AuditInfo, BeforeAfter, Column, IdentifierLike, NamespaceLike, SQLRepresentation, VersionLogEntry,
                    View, ViewDiff, ViewDiffSide, ViewVersion)
from .types import parse_type

__version__ = "0.1.0"

__all__ = [
    "ViewStore",
    "ViewChange",
    "View",
    "ViewVersion",
    "VersionLogEntry",
    "AuditInfo",
    "ViewDiff",
    "ViewDiffSide",
    "BeforeAfter",
    "Column",
    "SQLRepresentation",
    "Event",
    "parse_type",
    "DROP_DIALECT_ALLOWED",
    # the forms the API's arguments take, for type checkers
    "IdentifierLike",
    "NamespaceLike",
    "TimeLike",
    "AsOf",
    "EventTypes",
    "ColumnLike",
    "ColumnDict",
    "RepresentationLike",
    "RepresentationDict",
    "RepresentationsLike",
    "ViewStoreError",
    "NoSuchViewError",
    "ViewAlreadyExistsError",
    "ConcurrencyError",
    "ValidationError",
    "IcebergMetadataError",
    "CorruptLogError",
    "DamagedProjectionsError",
    "EngineError",
    "NotInstalledError",
]
