"""Tables for people: text laid out in columns, escaped, fast at any length.

:func:`data_table` is a rich table for short output (``show``, ``list``); :class:`TextTable`
lays out tables of any length (``history``, ``audit``, ``query``) itself, in time proportional
to its cells, and prints them through rich's console in batches. Both show control characters
escaped (:func:`visible`; a tab in a cell expanded to blanks): everything printed comes from user data.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from rich import box as rich_box
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

__all__ = ["visible", "data_table", "TableColumn", "TextTable"]


#: control characters (but tab and newline), the line and paragraph separators, bidirectional
#: overrides and marks, and the characters that print as nothing (soft hyphen, zero-width space and
#: joiners, word joiner, byte order mark): in a terminal they move the cursor, clear the screen, set
#: the window title, break the line, reorder text or hide in a name (``sales.da\u200bily`` would look
#: like ``sales.daily``), so stored text shows them escaped
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                      "\ud800-\udfff]")  # and lone surrogates


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match[0]):02x}" if ord(match[0]) < 0x100 else f"\\u{ord(match[0]):04x}"


def visible(text: str) -> str:
    """Text for a terminal: control characters as escapes (``\\x1b``), everything else as stored.
    ``--json`` is the exact form."""
    return _CONTROL.sub(_escape, text)


#: how narrow data_table lets the other columns get so that a column of names keeps them whole
_OTHERS_NARROWEST = 8


class _DataTable(Table):
    names: frozenset[int] = frozenset()  # the columns of names (see data_table)
    widest: list[int]  # each column's widest line so far, header included

    def add_row(self, *cells: Any, **options: Any) -> None:
        cells = tuple(_cell_text(c) if isinstance(c, str) else c for c in cells)
        for i, cell in enumerate(cells):  # the widest line of each column, header included
            text = cell.plain if isinstance(cell, Text) else cell if isinstance(cell, str) else ""
            self.widest[i] = max(self.widest[i], _text_width(text))
        super().add_row(*cells, **options)

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Any]:
        """The title on a line of its own, as :class:`TextTable` prints it: rich pads a title to the
        table's width with blanks (hundreds of them after a long SQL text) and wraps it there. The
        columns of names do not wrap when the others can give the room (rich would narrow the
        widest columns alike, a name among them); where they cannot, names fold, never cut."""
        title, self.title = self.title, None
        others = sum(min(w, _OTHERS_NARROWEST) for i, w in enumerate(self.widest) if i not in self.names)
        room = options.max_width - 3 * len(self.columns) - 1 - others
        whole = [i for i in self.names if self.widest[i] <= room]
        room -= sum(self.widest[i] for i in whole)
        while room < 0 and whole:  # not all of them: the narrowest ones
            room += self.widest[whole.pop(max(range(len(whole)), key=lambda k: self.widest[whole[k]]))]
        try:
            for i in whole:
                self.columns[i].no_wrap = True
            if title is not None:
                yield Text(visible(str(title)), style="table.title")
            yield from super().__rich_console__(console, options)
        finally:
            self.title = title
            for i in whole:
                self.columns[i].no_wrap = False


def data_table(*headers: str, title: str | None = None, names: Sequence[str] = ()) -> Table:
    """A table whose cells wrap long text onto more lines instead of cutting it, and show control
    characters escaped (see :func:`visible`). The columns headed ``names`` hold names (a view's
    identifier, a column's name): they keep each whole while the other columns can fold instead."""
    table = _DataTable(title=title, title_justify="left")
    for header in headers:
        table.add_column(header, overflow="fold")
    table.names = frozenset(headers.index(name) for name in names)
    table.widest = [_text_width(visible(header)) for header in headers]
    return table


class TableColumn(NamedTuple):
    """A column of a :class:`TextTable`.

    ``wraps_to`` is the narrowest width its text wraps to when the table is too wide for the
    console (None: it never wraps, e.g. a number); ``rank`` says when it gives up width: columns
    of a lower rank first. A ``snap`` column goes straight to ``wraps_to`` (a time breaks between
    its date and its time of day: a width in between would only be blank). A column with
    ``breaks`` breaks its text only after one of those characters, never elsewhere, so it gets no
    narrower than its longest piece between them (a view's identifier after a dot: never inside
    a name).
    """

    header: str
    wraps_to: int | None = 10
    rank: int = 0
    snap: bool = False
    breaks: str = ""


#: how narrow a column that wraps gets when nothing else helps (narrower, text is unreadable: a
#: table still too wide runs over the console's width)
_NARROWEST = 6


class TextTable:
    """A table of text for people that costs time in proportion to its cells, for tables of any
    length (``history``, ``audit``, ``query``): a rich :class:`~rich.table.Table` measures, wraps
    and renders every cell through its layout engine, about 0.6 ms a row.

    Cells are measured once (rich's cell widths; a cell of printable ASCII, as most are, is taken as
    it is, its length its width) and padded to their column; only a cell wider than its column is
    wrapped (see :func:`_wrap`). When the table fits the console it looks as
    :func:`data_table`'s do (rich's box, bold header, title above). When it does not, the columns
    that wrap give up width rank by rank, down to their ``wraps_to``; a table that cannot keep
    its box that way drops its vertical rules for two spaces between columns (ten more cells for
    text at seven columns), and its snap columns and the columns with ``breaks`` give up width too
    (never below their longest piece: such a table runs over the console instead). Rows go to the
    console in batches as they are formatted, so a reader that goes away (``| head``) stops the
    work at the next batch.

    A table of any length is printed in bounded memory: the layout is made on its first
    :data:`WINDOW` rows, and the rows after them are formatted as they come, none kept. A later
    cell wider than its column widens the column from that row on where the table, so widened,
    still fits the console as it is laid out (always in a pipe, whose console has no width: a row
    stays a line, its cells whole), else it wraps in its column as a cell of a table too wide does;
    a cell of a column that never wraps (a number) widens its column all the same, the columns that
    wrap anywhere giving up the cells it takes (down to six cells; past that the table runs over).
    Control characters print escaped, as everywhere (:func:`visible`). A row its source fails to
    give (its error: a damaged event's CorruptLogError) ends the table after the lines of every row
    before it, and the error is raised.
    """

    #: lines formatted and printed at a time
    BATCH = 200
    #: the rows the columns' widths are measured on, before the first line is printed; the rows
    #: after them are formatted and printed as they come, none of them held
    WINDOW = 10_000

    def __init__(self, *columns: TableColumn | str, title: str | Callable[[], str] | None = None) -> None:
        self.columns = [c if isinstance(c, TableColumn) else TableColumn(c) for c in columns]
        # a header is data too (a query's column names): escaped as the cells are
        self.columns = [c._replace(header=_cell_text(c.header)) for c in self.columns]
        self.title = title

    def print(self, console: Console, rows: Iterable[Sequence[str]]) -> None:
        columns = self.columns
        rows = iter(rows)
        cells: list[tuple[list[str], list[int]]] = []  # each row's texts and their widths (the widest line)
        natural = [_text_width(c.header) for c in columns]
        breaking = [(i, _Pieces(c.breaks)) for i, c in enumerate(columns) if c.breaks]
        unbroken = [0] * len(columns)  # a breaking column's longest piece (a floor)
        for i, pieces in breaking:
            unbroken[i] = pieces.longest(columns[i].header)

        def measured(row: Sequence[str]) -> tuple[list[str], list[int]]:
            texts, sizes = [], []
            for value in row:
                if value.isascii() and value.isprintable():  # nothing to escape, its length its width
                    texts.append(value)
                    sizes.append(len(value))
                else:
                    text = _cell_text(value)
                    texts.append(text)
                    sizes.append(_text_width(text))
            for i, pieces in breaking:
                longest = pieces.longest(texts[i])
                if longest > unbroken[i]:
                    unbroken[i] = longest
            return texts, sizes

        for row in itertools.islice(rows, self.WINDOW):  # the layout's rows
            texts, sizes = measured(row)
            cells.append((texts, sizes))
            for i, size in enumerate(sizes):
                if size > natural[i]:
                    natural[i] = size
        widths, boxed = self._layout(natural, console.width, unbroken)
        box = (rich_box.HEAVY_HEAD if boxed else rich_box.SIMPLE_HEAD).substitute(console.options)
        if boxed:
            start, between, end = f"{box.mid_left} ", f" {box.mid_vertical} ", f" {box.mid_right}"
        else:
            start, between, end = "", "  ", ""
        wrapped: dict[tuple[str, int, str], list[str]] = {}

        def lines_of(text: str, width: int, breaks: str) -> list[str]:
            key = (text, width, breaks)
            if key not in wrapped:
                wrapped[key] = [piece for line in text.split("\n")
                                for piece in (_wrap_after(line, width, breaks) if breaks else
                                              _wrap(console, line, width))]
            return wrapped[key]

        def line(texts: Sequence[str]) -> str:
            text = start + between.join(t + " " * (w - (len(t) if t.isascii() else cell_len(t)))
                                        for t, w in zip(texts, widths)) + end
            return text if boxed else text.rstrip()

        fits = widths == natural  # no cell is wider than its column
        numbers = [i for i, c in enumerate(columns) if c.wraps_to is None]  # columns that never wrap
        rules = 3 * len(columns) + 1 if boxed else 2 * (len(columns) - 1)

        def later() -> Iterator[tuple[list[str], list[int]]]:
            """The rows after the layout's, each measured as it comes; a cell wider than its column
            widens the column from that row on while the table then still fits the console as it
            is laid out, else it wraps (see the class's notes); a cell of a column that never wraps
            (a number) widens its column all the same, the columns of text giving up the cells."""
            nonlocal widths, natural, fits
            for row in rows:
                texts, sizes = measured(row)
                if any(s > w for s, w in zip(sizes, widths)):
                    wider = [max(s, w) for s, w in zip(sizes, widths)]
                    if widths == natural and self._layout(wider, console.width, unbroken) == (wider, boxed):
                        widths = natural = wider
                    else:
                        fits = False
                        if any(sizes[i] > widths[i] for i in numbers):  # folded, 100000 would read as 10000
                            widths = [wider[i] if i in numbers else w for i, w in enumerate(widths)]
                            self._narrow_text(widths, sum(widths) + rules - console.width)
                yield texts, sizes

        def formatted() -> Iterator[str]:
            for texts, sizes in itertools.chain(cells, later()):
                if fits or all(s <= w for s, w in zip(sizes, widths)):
                    # the common case: one line, each cell padded to its column (unless a cell has two)
                    text = start + between.join(t + " " * (w - s) for t, s, w in zip(texts, sizes, widths)) + end
                    if "\n" not in text:
                        yield text if boxed else text.rstrip()  # as line() ends an unboxed line
                        continue
                parts = [lines_of(t, w, c.breaks) for t, w, c in zip(texts, widths, columns)]
                for k in range(max(len(p) for p in parts)):
                    yield line([p[k] if k < len(p) else "" for p in parts])

        head = Text()
        if self.title is not None:  # (a function: asked once the layout's rows are read, e.g. a count)
            head.append(visible(self.title if isinstance(self.title, str) else self.title()) + "\n", "table.title")
        if boxed:
            head.append(box.get_top([w + 2 for w in widths]) + "\n")
        header = [lines_of(c.header, w, c.breaks) for c, w in zip(columns, widths)]
        height = max(len(h) for h in header)
        header = [[""] * (height - len(h)) + h for h in header]  # rich puts a header at the bottom of its cell
        for k in range(height):
            head.append(f"{box.head_left} " if boxed else "")
            for i, (lines, width) in enumerate(zip(header, widths)):
                if i:
                    head.append(f" {box.head_vertical} " if boxed else "  ")
                head.append(lines[k] + " " * (width - cell_len(lines[k])), "table.header")
            if boxed:
                head.append(f" {box.head_right}")
            else:
                head.rstrip()
            head.append("\n")
        if boxed:
            head.append(box.get_row([w + 2 for w in widths], "head"))
        else:
            head.append("  ".join(box.head_row_horizontal * w for w in widths))
        console.print(head, soft_wrap=True)
        batch: list[str] = []
        try:
            for text in formatted():
                batch.append(text)
                if len(batch) == self.BATCH:
                    done, batch = batch, []
                    console.print(_Lines(done), soft_wrap=True, end="")
        except Exception:  # a row its source could not give (a damaged event): the lines before it first
            if batch:  # (a failed print left none: each batch is taken out before it is printed)
                console.print(_Lines(batch), soft_wrap=True, end="")
            raise
        if boxed:
            batch.append(box.get_bottom([w + 2 for w in widths]))
        if batch:
            console.print(_Lines(batch), soft_wrap=True, end="")

    def _layout(self, natural: list[int], width: int, unbroken: list[int]) -> tuple[list[int], bool]:
        """Column widths for a console ``width`` wide, and whether the table keeps rich's box."""
        n = len(self.columns)
        widths, left = self._fit(natural, width - 3 * n - 1, unbroken, snap=False)
        if left <= 0:
            return widths, True
        widths, left = self._fit(natural, width - 2 * (n - 1), unbroken, snap=True)
        if left > 0:  # still too wide: the columns that wrap anywhere narrow further
            self._narrow_text(widths, left)
        return widths, False

    def _narrow_text(self, widths: list[int], excess: int) -> None:
        """Take up to ``excess`` cells from the columns that wrap anywhere (no time, no column with
        ``breaks``), the widest first, none below :data:`_NARROWEST`."""
        text = [i for i, c in enumerate(self.columns) if c.wraps_to is not None and not c.snap and not c.breaks]
        _squeeze(widths, text, {i: min(widths[i], _NARROWEST) for i in text}, excess)

    def _fit(self, natural: list[int], room: int, unbroken: list[int], *, snap: bool) -> tuple[list[int], int]:
        """Widths within ``room``, the columns giving up width rank by rank down to their floors; and
        how many cells the table is still too wide (0 or less when it fits)."""
        columns = self.columns
        widths = list(natural)
        excess = sum(widths) - room
        done: list[int] = []
        for rank in sorted({c.rank for c in columns if c.wraps_to is not None}):
            if excess <= 0:
                break
            group = [i for i, c in enumerate(columns) if c.wraps_to is not None and c.rank == rank]
            floors = {i: max(min(natural[i], columns[i].wraps_to or 0), unbroken[i]) for i in group}
            if not snap:  # a table that keeps its box breaks no time, identifier or type
                group = [i for i in group if not columns[i].breaks]
            snapping = [i for i in group if columns[i].snap]
            if snapping and not snap:
                group = [i for i in group if i not in snapping]
            elif snapping:
                for i in snapping:
                    excess -= widths[i] - floors[i]
                    widths[i] = floors[i]
                group = [i for i in group if i not in snapping]
                if excess < 0:  # more than was needed: the columns squeezed before take the rest back
                    excess += _grow(widths, natural, done, -excess)
            excess = _squeeze(widths, group, floors, excess)
            done += group
        return widths, excess


class _Pieces:
    """The longest piece of a text between the points where it may break (after any of ``breaks``),
    remembered per text: a column of identifiers repeats the same few."""

    def __init__(self, breaks: str) -> None:
        self.pattern = re.compile(f"[^{re.escape(breaks)}\n]*[{re.escape(breaks)}]?")
        self.known: dict[str, int] = {}

    def longest(self, text: str) -> int:
        found = self.known.get(text)
        if found is None:
            found = self.known[text] = max(cell_len(piece) for piece in self.pattern.findall(text))
        return found


def _wrap_after(line: str, width: int, breaks: str) -> list[str]:
    """One line of a cell wrapped to ``width`` only after a character of ``breaks`` (a piece wider than
    that stays whole)."""
    if cell_len(line) <= width:
        return [line]
    lines, current = [], ""
    for piece in re.findall(f"[^{re.escape(breaks)}]*[{re.escape(breaks)}]|[^{re.escape(breaks)}]+$", line):
        if current and cell_len(current) + cell_len(piece) > width:
            lines.append(current)
            current = ""
        current += piece
    return [*lines, current]


def _cell_text(value: str) -> str:
    """A table cell's text: as :func:`visible` shows it, with tabs expanded to blanks up to the next
    multiple of 8 cells (SQL indented with tabs stays indented; rich's own table would break the line
    at a tab), so only a newline breaks a cell's line, in :func:`data_table`'s rich tables and in
    :class:`TextTable` alike."""
    text = visible(value)
    if "\t" not in text:
        return text
    return text.expandtabs(8) if text.isascii() else "\n".join(_expand_tabs(line) for line in text.split("\n"))


def _expand_tabs(line: str) -> str:
    """A line's tabs as blanks up to the next multiple of 8 cells, counting the cells a wide or
    combining character takes as the terminal does (``str.expandtabs`` counts characters)."""
    parts = line.split("\t")
    out, column = [], 0
    for part in parts[:-1]:
        column += cell_len(part)
        blanks = 8 - column % 8
        out += [part, " " * blanks]
        column += blanks
    out.append(parts[-1])
    return "".join(out)


def _text_width(text: str) -> int:
    if "\n" in text:
        return max(_line_width(line) for line in text.split("\n"))
    return _line_width(text)


def _line_width(line: str) -> int:
    # a printable ASCII character takes one cell, as rich counts it (at a tenth of the cost of asking)
    return len(line) if line.isascii() and line.isprintable() else cell_len(line)


class _Lines:
    """Lines of text, already laid out, that the console prints as they are."""

    def __init__(self, lines: list[str]) -> None:
        self.text = "\n".join(lines) + "\n"

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Segment]:
        yield Segment(self.text)


def _wrap(console: Console, line: str, width: int) -> list[str]:
    """One line of a cell wrapped to ``width``: at spaces, and a word longer than that folds.

    Text of one-cell characters (ASCII: control characters are escaped, tabs expanded by then)
    wraps with the standard library's textwrap, four times faster than rich; other text (wide
    characters, combining marks) with rich, which counts the cells each character takes.
    """
    if not line.isascii():
        if cell_len(line) <= width:
            return [line]
        return [part.plain for part in Text(line).wrap(console, width, overflow="fold")]
    if len(line) <= width:
        return [line]
    if " " not in line:  # one word (JSON, a name): it folds
        return [line[i:i + width] for i in range(0, len(line), width)]
    return textwrap.wrap(line, width, expand_tabs=False, replace_whitespace=False, break_on_hyphens=False) or [""]


def _squeeze(widths: list[int], group: list[int], floors: dict[int, int], excess: int) -> int:
    """Take up to ``excess`` cells of width from the columns of ``group``, the widest first (down
    to a common width), none below its floor; return how many cells are still to take."""
    movable = [i for i in group if widths[i] > floors[i]]
    if excess <= 0 or not movable:
        return excess
    spare = sum(widths[i] - floors[i] for i in movable)
    if spare <= excess:
        for i in movable:
            widths[i] = floors[i]
        return excess - spare
    target = sum(widths[i] for i in movable) - excess

    def total(level: int) -> int:
        return sum(max(floors[i], min(widths[i], level)) for i in movable)

    low, high = 0, max(widths[i] for i in movable)  # total(low) < target <= ... < total(high)
    while high - low > 1:
        middle = (low + high) // 2
        if total(middle) <= target:
            low = middle
        else:
            high = middle
    left = target - total(low)
    for i in movable:
        cut = max(floors[i], min(widths[i], low))
        if left > 0 and cut < widths[i] and cut == low:
            cut += 1
            left -= 1
        widths[i] = cut
    return 0


def _grow(widths: list[int], natural: list[int], group: list[int], room: int) -> int:
    """Give up to ``room`` cells back to the columns of ``group`` narrower than their text, the
    narrowest first; return how many were given."""
    given = 0
    while given < room:
        short = [i for i in group if widths[i] < natural[i]]
        if not short:
            break
        narrowest = min(widths[i] for i in short)
        for i in short:
            if widths[i] == narrowest and given < room:
                widths[i] += 1
                given += 1
    return given
