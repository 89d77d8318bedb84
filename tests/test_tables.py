"""viewstore.tables: tables for people, escaped and printed in batches."""

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

from viewstore.tables import TableColumn, TextTable, visible


def test_a_table_is_printed_in_batches_so_a_closed_pipe_stops_the_work(monkeypatch):
    """The rows go to the console a batch at a time as they are formatted: when the reader has gone
    (a write fails with a broken pipe) the command ends at that batch, not after formatting them all."""

    class Closing(io.StringIO):
        def write(self, text):
            self.writes = getattr(self, "writes", 0) + 1
            if self.writes > 2:  # the header and one batch got through
                raise BrokenPipeError
            return super().write(text)

    from viewstore.cli import _Console  # the CLI's console: the broken pipe reaches the caller

    file = Closing()
    console = _Console(file=file, width=200, markup=False, emoji=False, highlight=False)
    rows = [(str(i), "x" * (i % 7), "y") for i in range(5 * TextTable.BATCH)]
    with pytest.raises(BrokenPipeError):
        TextTable("n", "text", "more").print(console, rows)
    printed = file.getvalue().splitlines()
    assert printed[3:] == [f"│ {i:<3} │ {'x' * (i % 7):<6} │ y    │" for i in range(TextTable.BATCH)]
    assert len(printed) == 3 + TextTable.BATCH  # top, header, rule, then one batch: nothing more was written


def test_a_row_its_source_cannot_give_ends_the_table_after_every_line_before_it(monkeypatch):
    """The rows' source raising an error (a damaged event's) past the rows the table is laid
    out on lost the lines formatted since the last batch printed (up to 199): they are printed, then
    the error is raised; no bottom line."""
    from viewstore.errors import CorruptLogError

    monkeypatch.setattr(TextTable, "WINDOW", 10)

    def rows():
        for i in range(TextTable.BATCH + 50):
            yield f"{i:03}", "x"
        raise CorruptLogError("event at position 251 has a payload that is not JSON")

    console = Console(file=io.StringIO(), width=80, markup=False, emoji=False, highlight=False)
    with pytest.raises(CorruptLogError, match="position 251"):
        TextTable("n", "text").print(console, rows())
    printed = console.file.getvalue().splitlines()
    assert printed[3:] == [f"│ {i:03} │ x    │" for i in range(TextTable.BATCH + 50)]


def test_a_batch_whose_print_failed_is_not_printed_again_on_the_way_out():
    """A print of a batch that fails (a non-blocking pipe full for a moment: BlockingIOError) ends
    the table with that error; the batch is taken out before it is printed, so the way out (which
    prints what was formatted since the last batch) does not write its lines a second time."""

    class FullOnce(io.StringIO):
        writes = 0

        def write(self, text):
            self.writes += 1
            if self.writes == 3:  # the header went, then the first batch: full at the second one, once
                raise BlockingIOError(11, "Resource temporarily unavailable")
            return super().write(text)

    file = FullOnce()
    console = Console(file=file, width=80, markup=False, emoji=False, highlight=False)
    rows = [(f"{i:03}", "x") for i in range(2 * TextTable.BATCH)]
    with pytest.raises(BlockingIOError):
        TextTable("n", "text").print(console, rows)
    printed = file.getvalue().splitlines()  # top, header, rule, the first batch; not the failed one again
    assert printed[3:] == [f"│ {i:03} │ x    │" for i in range(TextTable.BATCH)]


def test_a_table_without_a_box_whose_lines_fill_the_last_batch_ends_with_no_blank_line():
    """A table too narrow for its box has no bottom line to end its last batch: 100 rows of two
    lines each fill one batch exactly, and nothing is printed after it (an empty batch prints a
    blank line)."""
    console = Console(file=io.StringIO(), width=24, markup=False, emoji=False, highlight=False)
    table = TextTable(TableColumn("text", 10), TableColumn("time", 12, rank=2, snap=True))
    table.print(console, [("abc", "2026-11-26 16:53:49.123")] * (TextTable.BATCH // 2))
    lines = console.file.getvalue().split("\n")  # the text ends with a newline: "" after it
    assert lines[:4] == ["text  time", "─" * 4 + "  " + "─" * 12, "abc   2026-11-26", " " * 6 + "16:53:49.123"]
    assert len(lines) == 2 + TextTable.BATCH + 1 and lines[-2:] == [" " * 6 + "16:53:49.123", ""]


def test_visible_escapes_lone_surrogates_which_a_terminal_cannot_encode():
    assert visible("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert visible("ok \U0001f600") == "ok \U0001f600"  # a whole pair is a character, printed as it is


def test_visible_escapes_characters_that_print_as_nothing_so_two_names_never_look_alike():
    for char in "\xad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff":
        shown = visible(f"sales.da{char}ily")
        escape = f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
        assert shown != "sales.daily" and shown == f"sales.da{escape}ily", repr(char)
    assert visible("naïve 漢字 😀 e\u0301") == "naïve 漢字 😀 e\u0301"  # printing characters stay as they are


def test_visible_escapes_every_bidirectional_embedding_override_and_isolate():
    """They reorder the text after them on the terminal: a name holding one could show as another."""
    for char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        assert visible(f"a{char}b") == f"a\\u{ord(char):04x}b", repr(char)


def test_a_cell_breaks_its_line_only_at_a_newline_and_shows_every_other_separator_escaped():
    """The line and paragraph separators and the characters str.splitlines breaks at (rich too)
    print escaped on the cell's own line, and a tab as blanks to the next multiple of 8 (SQL indented
    with tabs stays indented), in a rich table and in a TextTable, on the short way of printable ASCII
    and the other alike: no cell gets a line break but at a newline."""
    from viewstore.tables import data_table

    for char, shown in [("\t", None), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\x85"),
                        ("\x0b", "\\x0b"), ("\x0c", "\\x0c"), ("\x1c", "\\x1c"), ("\r", "\\x0d")]:
        for cell in (f"a{char}b", f"wide 漢{char}b"):
            # a tab to the next multiple of 8 cells: 漢 takes two
            text = {"a\tb": "a       b", "wide 漢\tb": "wide 漢 b"}[cell] if shown is None else cell.replace(char, shown)
            expected = f"│ 1 │ {text} │ z │"
            console = Console(file=io.StringIO(), width=80, markup=False, emoji=False, highlight=False)
            TextTable("n", "text", "m").print(console, [("1", cell, "z")])
            rich_table = data_table("n", "text", "m")
            rich_table.add_row("1", cell, "z")
            console.print(rich_table)
            lines = console.file.getvalue().split("\n")  # not splitlines(): it would break where a terminal may
            assert [line.rstrip() for line in lines if line.startswith("│ 1 ")] == [expected, expected], repr(char)
            assert char not in console.file.getvalue(), repr(char)
    assert visible("a\u2028b\tc") == "a\\u2028b\tc"  # a message keeps its tabs; a line separator is escaped


def _printed(table, rows, width):
    console = Console(file=io.StringIO(), width=width, markup=False, emoji=False, highlight=False)
    table.print(console, rows)
    return console.file.getvalue().rstrip("\n").split("\n")  # not splitlines(): it breaks at U+2028 and more


def test_a_title_prints_escaped_in_a_data_table_as_in_a_text_table():
    """A title may hold data (a report's summary names a file): on a line of its own, escaped."""
    from viewstore.tables import data_table

    title, shown = "report of \x1b]0;x\x07 sales.da\u200bily", "report of \\x1b]0;x\\x07 sales.da\\u200bily"
    table = data_table("n", title=title)
    table.add_row("1")
    console = Console(file=io.StringIO(), width=80, markup=False, emoji=False, highlight=False)
    console.print(table)
    assert console.file.getvalue().split("\n")[0] == shown
    assert _printed(TextTable("n", title=title), [("1",)], 80)[0] == shown


def test_a_column_with_breaks_breaks_only_after_them_and_last_of_all():
    """An identifier column (breaks='.') keeps its text whole while another column can give; then it
    breaks after a dot, never inside a part, however narrow the console (the table runs over)."""
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("n", None), TableColumn("name", 0, rank=1, breaks="."),
                      TableColumn("text", 10, rank=0))
    rows = [("1", "sales.orders_by_day", "one two three four five six seven eight")]
    wide = _printed(table, rows, 200)
    assert wide[3] == "│ 1 │ sales.orders_by_day │ one two three four five six seven eight │"
    # boxed, the name would have to break; without the box it fits whole: the box goes first
    narrow = _printed(table, rows, 2 + 19 + 2 + 10 + 1)
    assert narrow[2].startswith("1  sales.orders_by_day  ") and "│" not in "".join(narrow)
    broken = _printed(table, rows, 1 + 2 + 13 + 2 + 6)
    assert [line[3:16].rstrip() for line in broken[2:4]] == ["sales.", "orders_by_day"], broken
    assert all(len(line) <= 24 for line in broken)
    too_narrow = _printed(table, rows, 12)  # less than the longest part: it runs over, whole
    assert any("orders_by_day" in line for line in too_narrow), too_narrow


def test_a_data_tables_names_stay_whole_while_the_other_columns_can_fold():
    """rich narrows the widest columns alike, a name among them ('warehouse.sales.orders_by_region'
    / '_and_day_with_returns' at 80 columns); the columns of names keep them whole where the
    others can give the room, and fold them (never cut) where they cannot."""
    from viewstore.tables import data_table

    name = "warehouse.sales.orders_by_region_and_day_with_returns"
    details = ("[TABLE_OR_VIEW_NOT_FOUND] The table or view `spark_catalog`.`warehouse_sales`.`orders_with_returns` "
               "cannot be found. Verify the spelling and correctness of the schema and catalog.")

    def printed(width, names):
        table = data_table("view", "status", "details", title="report", names=names)
        table.add_row(name, "broken", details)
        table.add_row("sales.x", "ok", "")
        console = Console(file=io.StringIO(), width=width, markup=False, emoji=False, highlight=False)
        console.print(table)
        return console.file.getvalue()

    assert f"│ {name} │ broken │" not in printed(80, [])  # rich alone cuts it
    for width in (77, 80, 100, 200):  # at 77 the name takes all the room the others leave, to the cell
        out = printed(width, ["view"])
        assert f"│ {name} │ broken │" in out and all(len(line) <= width for line in out.splitlines()), out
        column = "".join(line.split("│")[3] for line in out.splitlines()[4:-1])
        assert column.replace(" ", "") == details.replace(" ", "")  # every character, in order
    narrow = printed(50, ["view"])  # no room: folded, every character there
    assert "".join(line.split("│")[1].strip() for line in narrow.splitlines()[4:-2]) == name
    assert all(len(line) <= 50 for line in narrow.splitlines())
    for width in (30, 12, 5):  # narrower than the other columns' floors: rich's own folding, no error
        assert "│" in printed(width, ["view"])


def test_a_data_tables_other_columns_give_a_name_their_room_down_to_eight_cells_and_no_further():
    """The name stays whole from 77 columns (53 cells, 'status' 6 and the details 8, with the rules)
    on; one column less and the details would get 7 cells, so the name folds instead; and no
    header breaks at any width ('details' is 7 cells)."""
    from viewstore.tables import data_table

    name = "warehouse.sales.orders_by_region_and_day_with_returns"
    details = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `spark_catalog`.`warehouse_sales`.`orders` cannot be found."
    for width in range(40, 120):
        table = data_table("view", "status", "details", names=["view"])
        table.add_row(name, "broken", details)
        console = Console(file=io.StringIO(), width=width, markup=False, emoji=False, highlight=False)
        console.print(table)
        out = console.file.getvalue()
        lines = out.splitlines()
        assert "┃ details " in lines[1] and lines[2].startswith("┡"), (width, out)  # a header of one line
        assert (f"│ {name} │ broken │" in out) == (width >= 77), (width, out)


def test_a_data_tables_empty_column_gives_a_name_the_room_its_header_leaves_and_no_more():
    """A column of empty cells is as wide as its header: 'details' keeps its 7 cells, so the name
    (53 cells) stays whole from 76 columns on and folds below, and no header breaks at any width."""
    from viewstore.tables import data_table

    name = "warehouse.sales.orders_by_region_and_day_with_returns"
    for width in range(60, 100):
        table = data_table("view", "status", "details", names=["view"])
        table.add_row(name, "broken", "")
        console = Console(file=io.StringIO(), width=width, markup=False, emoji=False, highlight=False)
        console.print(table)
        out = console.file.getvalue()
        lines = out.splitlines()
        assert "┃ status ┃ details ┃" in lines[1] and lines[2].startswith("┡"), (width, out)  # headers of one line
        assert (f"│ {name} │ broken │" in out) == (width >= 76), (width, out)
        assert "".join(line.split("│")[1].strip() for line in lines[3:-1]) == name, (width, out)


def test_a_data_table_printed_again_on_a_narrower_console_folds_the_name_it_kept_whole():
    from viewstore.tables import data_table

    name = "warehouse.sales.orders_by_region_and_day_with_returns"
    table = data_table("view", "status", names=["view"])
    table.add_row(name, "broken")
    for width in (200, 40):
        console = Console(file=io.StringIO(), width=width, markup=False, emoji=False, highlight=False)
        console.print(table)
        lines = console.file.getvalue().splitlines()
        assert all(cell_len(line) <= width for line in lines), lines
        assert "".join(line.split("│")[1].strip() for line in lines[3:-1]) == name, lines


def test_a_data_table_with_room_for_one_of_two_names_keeps_the_shorter_whole():
    from viewstore.tables import data_table

    short, long = "sales.orders_by_day", "warehouse.sales.orders_by_region_and_day_with_returns"
    table = data_table("view", "source", "details", names=["view", "source"])
    table.add_row(long, short, "a detail that can fold as much as it needs to")
    console = Console(file=io.StringIO(), width=80, markup=False, emoji=False, highlight=False)
    console.print(table)
    lines = console.file.getvalue().splitlines()
    assert f"│ {short} │" in lines[3], lines
    assert "".join(line.split("│")[1].strip() for line in lines[3:-1]) == long, lines  # folded, every character


def test_a_cells_width_is_what_rich_counts_also_where_ascii_takes_the_short_way():
    """Printable ASCII is measured by its length; everything else by rich: both agree with rich on
    every kind of line (controls and tabs count as rich counts them, wide and combining characters)."""
    from rich.cells import cell_len

    from viewstore.tables import _text_width

    texts = ["", "plain", " spaced out ", "~!@#$%^&*()_+{}|:<>?`-=[]\\;',./\"", "".join(map(chr, range(32, 127))),
             "tab\there", "nul\x00", "del\x7f", "esc\x1b[0m", "two\nlines, the second longer", "wide 漢字", "e\u0301",
             "😀 emoji", "ünï", "\u2028", "a\nb\tc\n漢"]
    texts += [chr(i) for i in range(0, 0x300)]
    for text in texts:
        assert _text_width(text) == max(cell_len(line) for line in text.split("\n")), repr(text)


def test_a_tab_in_a_cell_reaches_the_next_multiple_of_8_cells_after_wide_characters():
    """A tab stop is counted in the cells the text takes on the terminal: two wide characters take
    four cells, so a tab after them adds four blanks (counted in characters, it added six)."""
    from viewstore.tables import _cell_text

    assert _cell_text("漢字\tx") == "漢字    x"
    assert _cell_text("😀 a\tb") == "😀 a    b"  # an emoji takes two cells, the blank and a one each
    assert _cell_text("e\u0301\tx\n\t漢\ty") == "e\u0301       x\n        漢      y"  # a combining mark takes none
    assert _cell_text("ünï\t.") == "ünï     ." and _cell_text("ab\tc") == "ab      c" and _cell_text("漢字") == "漢字"
    assert "│ 漢字    x │" in _printed(TextTable("sql"), [("漢字\tx",)], 40)


def test_each_tab_of_a_line_of_wide_characters_counts_from_the_stop_the_one_before_reached():
    """A second tab on a line of wide characters counts the blanks the first one added: after a tab
    stop at 8, one cell more leaves seven blanks to 16 (counted from the text alone, it left five)."""
    from viewstore.tables import _cell_text

    assert _cell_text("漢\tx\ty") == "漢      x       y"
    assert _cell_text("ü\tab\tc\td") == "ü       ab      c       d"


def test_a_table_of_every_kind_of_cell_looks_as_rich_draws_it():
    """Cells of printable ASCII take a short way (no escaping, their length as their width, one line);
    the others are escaped, measured and split into lines: a table mixing them, in rows that fit
    whole and rows of two lines, is drawn line for line as rich's own table draws those cells."""
    from viewstore.tables import data_table

    kinds = ["plain", "", " spaced ", "".join(map(chr, range(32, 127))), "esc\x1b[1m", "del\x7f", "two\nlines",
             "wide 漢字", "e\u0301", "😀", "\ud800", "a\nb\nc 漢", "tab\there", "line\u2028separator", "p\u2029",
             "\x85nel", "v\x0bf\x0c"]
    rows = [(str(i), kinds[i % len(kinds)], kinds[(i * 5 + 3) % len(kinds)],
             "x" * (i % 9)) for i in range(3 * len(kinds))]
    rows.append(("last", "", "", ""))
    console = Console(file=io.StringIO(), width=250, markup=False, emoji=False, highlight=False)
    rich_table = data_table("n", "one", "two", "three", title="cells")
    for row in rows:
        rich_table.add_row(*row)
    console.print(rich_table)
    expected = [line.rstrip() for line in console.file.getvalue().rstrip("\n").split("\n")]
    assert _printed(TextTable("n", "one", "two", "three", title="cells"), rows, 250) == expected


def test_a_column_with_breaks_fills_each_line_up_to_its_width():
    """A piece that ends exactly at the column's width stays on its line: an identifier breaks after
    a dot only where the next part would not fit."""
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("name", 0, breaks="."))
    printed = _printed(table, [("sales.daily.orders",)], 12)
    assert printed[2:] == ["sales.daily.", "orders"], printed


def test_a_column_with_breaks_gets_no_narrower_than_its_header():
    """A header breaks where its cells do: 'view' has no dot, so the column keeps its four cells
    however short the pieces of its names (the next column's header and rule stay over its text)."""
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("n", None), TableColumn("view", 0, rank=1, breaks="."), TableColumn("text", 10))
    printed = _printed(table, [("1", "s.a.b", "one two three four five six")], 16)
    assert printed[:5] == ["n  view  text", "─  ────  ───────", "1  s.a.  one two",
                           "   b     three", "         four"], printed


def test_a_column_with_breaks_breaks_a_cell_of_two_lines_within_each_line():
    """A piece ends at a newline too: the second line's first piece is measured alone, not with the
    first line's last."""
    from viewstore.tables import TableColumn

    printed = _printed(TextTable(TableColumn("name", 0, breaks=".")), [("ab.cd\nef.gh",)], 4)
    assert printed[2:] == ["ab.", "cd", "ef.", "gh"], printed


def test_a_column_with_no_name_and_no_text_still_prints():
    """A query may name a column '' (SQLite takes AS ""): a column nothing is wide, printed as one."""
    printed = _printed(TextTable("", "n"), [("", "1")], 80)
    assert printed[3] == "│  │ 1 │", printed


def test_a_header_that_wraps_puts_the_shorter_headers_on_its_last_line():
    """As rich puts a header at the bottom of its cell: a short header beside one that wraps
    stands on the header's last line, just above the rule."""
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("n", None), TableColumn("long header text", 6))
    printed = _printed(table, [("1", "abcdef")], 14)
    assert printed[1:5] == ["┃   ┃ long   ┃", "┃   ┃ header ┃", "┃ n ┃ text   ┃", "┡━━━╇━━━━━━━━┩"], printed


def test_a_column_that_wraps_gets_no_narrower_than_six_cells_and_the_table_runs_over():
    printed = _printed(TextTable("a", "b"), [("x" * 40, "y" * 40)], 5)
    assert printed[0] == "a       b" and printed[1] == "──────  ──────"
    assert printed[2] == "xxxxxx  yyyyyy" and len(printed) == 2 + 7


def test_a_word_that_folds_keeps_its_last_piece_however_short():
    for length in (12, 13, 14):
        printed = _printed(TextTable("a"), [("x" * length,)], 5)  # the column gets its six cells
        assert printed[2:] == ["x" * 6] * (length // 6) + (["x" * (length % 6)] if length % 6 else []), printed


def test_a_table_without_its_box_has_no_trailing_blanks_on_any_line():
    """Without the box (a console too narrow for it) a line ends with its last cell's text: a row
    of one line as much as a row of several and the header."""
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("n", None), TableColumn("name", 0, rank=1, breaks="."), TableColumn("text", 10))
    rows = [("1", "sales.orders_by_day", "one two three four five six"), ("2", "a.b", "x\ny"), ("3", "a.b", "z")]
    printed = _printed(table, rows, 30)
    assert "│" not in "".join(printed) and printed[-1] == "3  a.b              z", printed
    assert [line for line in printed if line != line.rstrip()] == [], printed


def test_columns_that_give_up_width_together_still_fill_the_console():
    """Two columns squeezed to a common width share the odd cell: the table is as wide as the console."""
    text = "alpha beta gamma delta epsilon"  # 30 cells each, 41 to share
    printed = _printed(TextTable("a", "b"), [(text, text)], 48)
    assert len(printed[0]) == 48 and {len(line) for line in printed} == {48}, printed


def test_a_column_squeezed_to_the_common_width_is_never_given_a_cell_its_text_does_not_need():
    """The odd cell goes to a column whose text is wider than the common width, not to the one
    whose text is exactly that wide (20 cells, one of blank on each side)."""
    text = "one two three four five six seven eight"
    printed = _printed(TextTable("a", "b", "c"), [("x" * 20, text, text)], 71)
    assert printed[3] == "│ " + "x" * 20 + " │ one two three four    │ one two three four   │", printed


def test_the_odd_cell_goes_to_a_column_at_the_common_width_not_to_one_held_at_its_floor():
    """'a' gives up width down to its floor of 20 cells, where its text fits exactly; 'b' and 'c' share
    what is left at a common width, and the odd cell goes to one of them, which can use it."""
    text = "one two three four five six seven eight nine"
    table = TextTable(TableColumn("a", 20), TableColumn("b", 6), TableColumn("c", 6))
    printed = _printed(table, [(text, text, text)], 51)
    assert printed[3] == "│ one two three four   │ one two     │ one two    │", printed
    assert {len(line) for line in printed} == {51}, printed


def test_a_time_that_snaps_gives_the_cells_it_did_not_need_back_to_the_text_squeezed_before():
    from viewstore.tables import TableColumn

    table = TextTable(TableColumn("text", 10, rank=0), TableColumn("time", 12, rank=2, snap=True))
    printed = _printed(table, [("aaa bbb ccc ddd eee fff", "2026-11-26 16:53:49.123")], 30)
    assert printed[1] == "─" * 16 + "  " + "─" * 12, printed
    assert printed[2:4] == ["aaa bbb ccc ddd   2026-11-26", "eee fff           16:53:49.123"], printed


def test_a_time_that_snaps_past_what_was_needed_leaves_a_text_never_squeezed_as_it_was():
    """The text is at its own width (its floor), so no rank gives up a cell before the time snaps,
    and the time's 11 cells are more than the 5 the table needed: none can go back to the text."""
    table = TextTable(TableColumn("text", 10), TableColumn("time", 12, rank=2, snap=True))
    printed = _printed(table, [("abc", "2026-11-26 16:53:49.123")], 24)
    wanted = ["text  time", "─" * 4 + "  " + "─" * 12, "abc   2026-11-26", " " * 6 + "16:53:49.123"]
    assert printed == wanted, printed


def test_cells_given_back_go_to_the_narrowest_column_squeezed_before_first():
    """A column squeezed to a floor of 10 and one to 14 get back the 8 cells a time that snaps does
    not need evenly from there: 16 each, not all of them to the wider one."""
    table = TextTable(TableColumn("a", 10), TableColumn("b", 14), TableColumn("time", 12, rank=2, snap=True))
    printed = _printed(table, [("aaa bbb ccc ddd eee fff", "aaa bbb ccc ddd eee fff", "2026-11-26 16:53:49.123")], 48)
    assert printed[1] == "─" * 16 + "  " + "─" * 16 + "  " + "─" * 12, printed


def test_a_time_narrower_than_its_snap_width_keeps_its_own_width():
    """A column that snaps goes down to its wraps_to only from wider: a text of five cells stays
    five cells wide, and the cells it does not take go to the text squeezed before."""
    table = TextTable(TableColumn("text", 10), TableColumn("when", 12, rank=2, snap=True),
                      TableColumn("time", 12, rank=2, snap=True))
    printed = _printed(table, [("aaa bbb ccc ddd eee fff ggg hhh", "never", "2026-11-26 16:53:49.123")], 40)
    assert printed[1] == "─" * 19 + "  " + "─" * 5 + "  " + "─" * 12, printed
    assert printed[2:4] == ["aaa bbb ccc ddd eee  never  2026-11-26",
                            "fff ggg hhh" + " " * 17 + "16:53:49.123"], printed


def test_a_time_that_snaps_keeps_its_width_when_the_table_runs_over():
    """On a console too narrow for the table only the columns that wrap anywhere narrow on to six
    cells: a time stays at its date's width (12 cells), split between date and time of day only."""
    table = TextTable(TableColumn("text", 10), TableColumn("time", 12, rank=2, snap=True))
    printed = _printed(table, [("aaa bbb ccc ddd eee fff", "2026-11-26 16:53:49.123")], 16)
    assert printed[1] == "─" * 6 + "  " + "─" * 12, printed
    assert printed[2:4] == ["aaa     2026-11-26", "bbb     16:53:49.123"], printed


def test_a_cell_of_ascii_text_wraps_at_spaces_only_as_rich_wraps_it():
    """Not after the hyphen of a word ('well-' then 'known view' would fit as well)."""
    printed = _printed(TextTable(TableColumn("n", None), "text"), [("1", "see the well-known view")], 21)
    assert printed[3:6] == ["│ 1 │ see the       │", "│   │ well-known    │", "│   │ view          │"], printed


def test_a_line_of_blanks_wider_than_its_column_stays_a_line_of_the_cell():
    """textwrap makes no line of a text of blanks alone: the cell keeps it as an empty line, so the
    lines after it stay where they are."""
    printed = _printed(TextTable("n", "text"), [("1", "a\n" + " " * 20 + "\nb")], 16)
    assert printed[2:] == ["1  a", "", "   b"], printed


def test_a_long_word_of_wide_or_accented_characters_folds_and_keeps_every_character():
    """Text that is not ASCII wraps by the cells each character takes, and a word longer than the
    column folds onto more lines as an ASCII one does: never cut."""
    for word in ("Größenverhältnisübersicht" * 2, "東京都の売上集計表" * 3):
        printed = _printed(TextTable("n", "text"), [("1", word)], 24)
        cells = [line.split("│")[2].strip() for line in printed[3:-1]]
        assert len(cells) > 1 and "".join(cells) == word, printed


def test_wide_characters_that_wrap_or_head_a_column_keep_its_rules_in_line():
    """A cell that wraps onto more lines and a header, of wide characters, are padded by the cells
    they take: every line of the table is as wide as the others; and a cell of fewer characters than
    its column has cells wraps when it takes more cells than that."""
    wrapped = _printed(TextTable("n", "text", "m"), [("1", "東京都の売上集計表 東京都の売上集計表", "z"), ("2", "漢字", "y")], 24)
    assert wrapped[3:5] == ["│ 1 │ 東京都の売上 │ z │", "│   │ 集計表       │   │"], wrapped
    assert {cell_len(line) for line in wrapped} == {24}, wrapped
    headed = _printed(TextTable("n", "東京都の売上集計表", "m"), [("1", "x", "z")], 80)
    assert headed[1] == "┃ n ┃ 東京都の売上集計表 ┃ m ┃" and {cell_len(line) for line in headed} == {30}, headed
    short = _printed(TextTable("n", "text"), [("1", "売上集計表 東京都")], 20)  # 9 characters, 17 cells, in 12
    assert short[3:5] == ["│ 1 │ 売上集計表   │", "│   │ 東京都       │"], short


def test_a_name_of_wide_characters_is_measured_in_cells_and_folds_where_it_cannot_stay_whole():
    from viewstore.tables import data_table

    name = "売上" * 20  # 40 characters, 80 cells
    table = data_table("view", "status", "details", names=["view"])
    table.add_row(name, "broken", "a detail that can fold as much as it needs to")
    console = Console(file=io.StringIO(), width=70, markup=False, emoji=False, highlight=False)
    console.print(table)
    lines = console.file.getvalue().splitlines()
    assert all(cell_len(line) <= 70 for line in lines), lines
    assert "".join(line.split("│")[1].strip() for line in lines[3:-1]) == name, lines


def _long_table(width):
    rows = [[str(i), "x"] for i in range(TextTable.WINDOW)] + [[str(TextTable.WINDOW), "wider text"], ["last", "y"]]
    console = Console(width=width, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable("n", "text").print(console, rows)
    return console.file.getvalue().splitlines()


def test_a_long_table_is_laid_out_on_its_first_rows_and_a_later_wider_cell_widens_its_column_where_it_fits():
    """A table longer than its layout's rows (TextTable.WINDOW) prints its first line before the
    rest is read: its columns are as wide as those rows need, and a later cell wider than its
    column widens the column from that row on while the table still fits the console (a pipe, as
    wide as need be: a row a line, every cell whole)."""
    lines = _long_table(1_000_000)
    assert len(lines) == 3 + TextTable.WINDOW + 3
    assert lines[:4] == ["┏━━━━━━┳━━━━━━┓", "┃ n    ┃ text ┃", "┡━━━━━━╇━━━━━━┩", "│ 0    │ x    │"]
    assert lines[-4:] == ["│ 9999 │ x    │", "│ 10000 │ wider text │",
                          "│ last  │ y          │", "└───────┴────────────┘"]


def test_a_later_cell_wider_than_its_column_wraps_in_it_where_a_wider_table_would_not_fit():
    lines = _long_table(20)
    assert lines[:4] == ["┏━━━━━━┳━━━━━━┓", "┃ n    ┃ text ┃", "┡━━━━━━╇━━━━━━┩", "│ 0    │ x    │"]
    assert lines[-6:] == ["│ 9999 │ x    │", "│ 1000 │ wide │", "│ 0    │ r    │", "│      │ text │", "│ last │ y    │",
                          "└──────┴──────┘"]


def test_the_last_row_of_the_layout_sets_the_widths_and_a_later_cell_of_the_last_column_widens_it():
    """The layout takes in exactly TextTable.WINDOW rows: a wider cell in the last of them widens its
    column from the first line on. A later row whose one wider cell is in the last column widens
    that column from that row on, as a wider cell of any column does."""
    window = TextTable.WINDOW
    rows = [["1", "x"]] * (window - 1) + [["1", "wider"], ["1", "widest text"], ["1", "y"]]
    console = Console(width=1_000_000, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable("n", "text").print(console, rows)
    lines = console.file.getvalue().splitlines()
    assert len(lines) == 3 + window + 2 + 1
    assert lines[:4] == ["┏━━━┳━━━━━━━┓", "┃ n ┃ text  ┃", "┡━━━╇━━━━━━━┩", "│ 1 │ x     │"]
    assert lines[-5:] == ["│ 1 │ x     │", "│ 1 │ wider │", "│ 1 │ widest text │", "│ 1 │ y           │",
                          "└───┴─────────────┘"]


def test_a_table_narrowed_to_the_console_keeps_its_layout_for_the_rows_after_it(monkeypatch):
    """A table whose layout narrowed a column to fit the console (a time broken between its date and
    its time of day) keeps its widths for the rows after the layout's: a later wider cell wraps in its
    column, and the table is not laid out again for each of them. Every later event's time is wider
    than its snapped column, so a layout asked for again at each row (0.25 ms at seven columns) cost
    2.6 times the CPU of the whole table (30,000 events at 80 columns)."""
    monkeypatch.setattr(TextTable, "WINDOW", 10)
    laid_out = []
    layout = TextTable._layout

    def counted(self, *args):
        laid_out.append(args)
        return layout(self, *args)

    monkeypatch.setattr(TextTable, "_layout", counted)
    columns = (TableColumn("pos", None), TableColumn("time (UTC)", 12, rank=2, snap=True),
               TableColumn("details", 16, rank=0))
    time = "2026-11-25 18:43:50.232"
    rows = [[str(i), time, "owner=finance"] for i in range(1, 11)]
    rows += [[str(i), time, "owner=finance team=sales"] for i in range(11, 111)]
    console = Console(width=40, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable(*columns).print(console, rows)
    lines = console.file.getvalue().splitlines()
    assert len(laid_out) == 1  # the layout's rows alone
    assert lines[:4] == ["pos  time (UTC)    details", "───  ────────────  ─────────────",
                         "1    2026-11-25    owner=finance", "     18:43:50.232"]
    assert lines[-2:] == ["110  2026-11-25    owner=finance", "     18:43:50.232  team=sales"]
    assert len(lines) == 2 + 2 * 110


def test_a_later_number_wider_than_its_column_stays_whole_where_the_table_cannot_widen(monkeypatch):
    """A column that never wraps (a number: TableColumn's wraps_to None) keeps a later cell wider than
    it whole where the table cannot widen (a terminal): the column widens from that row on, the
    columns of text giving up the cells it takes when the console has none to spare. Folded, the
    log position 100000 read as 10000 with a 0 on the next line."""
    monkeypatch.setattr(TextTable, "WINDOW", 2)
    time = "2026-11-25 18:43:50.232"
    console = Console(width=40, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    table = TextTable(TableColumn("pos", None),
                      TableColumn("time (UTC)", 12, rank=2, snap=True), TableColumn("details", 16))
    table.print(console,
                [["99998", time, "owner=finance"], ["99999", time, "owner=finance"], ["100000", time, "owner=finance"]])
    assert console.file.getvalue().splitlines()[-4:] == [
        "99999  2026-11-25    owner=finance", "       18:43:50.232",
        "100000  2026-11-25    owner=finance", "        18:43:50.232"]
    console = Console(width=24, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable(TableColumn("pos", None), TableColumn("details", 16)).print(
        console, [["9998", "owner=finance"], ["9999", "team=sales"], ["10000", "owner=finance"], ["10001", "x"]])
    assert console.file.getvalue().splitlines()[3:] == [
        "│ 9998 │ owner=finance │", "│ 9999 │ team=sales    │", "│ 10000 │ owner=financ │", "│       │ e            │",
        "│ 10001 │ x            │", "└───────┴──────────────┘"]


def test_a_later_number_wider_than_its_column_takes_its_cells_from_the_text_of_a_table_without_rules(monkeypatch):
    """The same in a table laid out without rules (too wide to box): the text column gives up just
    the cell the wider number takes, each line still the console's width, and a number in the second
    of two number columns widens its column though the first one's does not."""
    monkeypatch.setattr(TextTable, "WINDOW", 2)
    text = "abcdefghijklmnopqrstuvwxyz"
    console = Console(width=24, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable(TableColumn("pos", None), TableColumn("details", 16)).print(
        console, [["9998", text], ["9999", "x"], ["10000", text]])
    assert console.file.getvalue().splitlines() == [
        "pos   details", "────  ──────────────────", "9998  abcdefghijklmnopqr", "      stuvwxyz", "9999  x",
        "10000  abcdefghijklmnopq", "       rstuvwxyz"]
    console = Console(width=24, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable(TableColumn("p", None), TableColumn("v", None), TableColumn("details", 16)).print(
        console, [["1", "98", text], ["2", "99", "x"], ["3", "100", text]])
    assert console.file.getvalue().splitlines() == [
        "p  v   details", "─  ──  ─────────────────", "1  98  abcdefghijklmnopq", "       rstuvwxyz", "2  99  x",
        "3  100  abcdefghijklmnop", "        qrstuvwxyz"]


def test_a_number_column_a_later_cell_widened_stays_wide_when_a_later_cell_widens_another(monkeypatch):
    """A column of numbers widened by a later cell (in a table that cannot widen) keeps that width when
    a later row widens a second column of numbers: its widths are taken from the columns as they are
    now, not from the layout's (the first column would narrow back, its cells no longer under one
    another, 10 and 3 in columns of two widths)."""
    monkeypatch.setattr(TextTable, "WINDOW", 2)
    text = "abcdefghijklmnopqrstuvwxyz"
    console = Console(width=24, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    TextTable(TableColumn("p", None), TableColumn("v", None), TableColumn("details", 16)).print(
        console, [["1", "98", text], ["2", "99", "x"], ["10", "99", text], ["3", "100", text], ["4", "99", "x"]])
    assert console.file.getvalue().splitlines()[5:] == [
        "10  99  abcdefghijklmnop", "        qrstuvwxyz", "3   100  abcdefghijklmno", "         pqrstuvwxyz",
        "4   99   x"]
