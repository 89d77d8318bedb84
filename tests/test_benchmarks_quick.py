"""Every benchmark runs at tiny sizes, so the harness never rots. No timing is asserted here:
only that each benchmark produced sane, complete numbers, a table and JSON."""

import json
import math
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.core import CORE  # noqa: E402
from benchmarks.harness import markdown_table, results_payload  # noqa: E402
from benchmarks.run import main, run  # noqa: E402
from benchmarks.spark import SPARK  # noqa: E402


def check(results, names):
    assert {r.name for r in results} >= set(names)
    for r in results:
        assert math.isfinite(r.figure) and r.figure > 0, r
        assert r.unit and r.what and r.target, r
        if r.comparator_figure is not None:
            assert math.isfinite(r.comparator_figure) and r.comparator_figure > 0, r
            assert math.isfinite(r.ratio) and r.ratio > 0, r
            assert r.ratio_text != "—", r
        assert r.met in (True, False, None)
        assert (r.met is None) == (r.target in ("reported", "both reported")), r
    table = markdown_table(results)
    assert table.count("\n") == len(results) + 1
    json.dumps(results_payload(results, mode="quick", started=0, extra={}), default=str)


def test_every_core_benchmark_runs_at_tiny_sizes(tmp_path):
    results = run(list(CORE), quick=True, workdir=tmp_path, say=lambda message: None)
    check(results, ["alter_view_commits", "alter_view_sql_floor", "alter_view_in_transactions", "history_commits",
                    "history_commits_full", "load_view", "load_view_after_commit", "load_view_after_change", "rebuild",
                    "rebuild_from_empty", "events_whole_log", "audit_query", "audit_time_range", "audit_type",
                    "audit_latest", "load_view_as_of", "list_views", "storage",
                    "durability", "cli_start"])
    by_name = {r.name: r for r in results}
    assert by_name["audit_query"].details["matched"] > 0
    for name in ("audit_time_range", "audit_type", "audit_latest"):  # each found events, and what a scan finds
        assert by_name[name].details["matched"] > 0
    assert by_name["storage"].details["events"] > 1000
    cli = by_name["cli_start"].details  # a process of each side a round, every one timed
    assert len(cli["viewstore_cpu_s_per_round"]) == len(cli["sqlite_utils_cpu_s_per_round"]) >= 2
    assert by_name["rebuild_from_empty"].details["rows_written"]["view_versions"] > 0
    rebuild = by_name["rebuild"].details
    assert len(rebuild["per_round"]) == len(rebuild["bare_read_per_round"]) >= 1
    assert by_name["rebuild"].comparator_figure == statistics.median(rebuild["bare_read_per_round"])
    events = by_name["events_whole_log"]  # µs per event beside µs per row of the bare read
    assert events.comparator_figure == 1e6 / statistics.median(events.details["bare_read_per_round_rows_per_s"])


def test_the_command_prints_a_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "run.json"
    md = tmp_path / "RESULTS.md"
    assert main(["--quick", "--only", "alter_view", "load_view", "--json", str(out), "--results-md", str(md)]) == 0
    printed = capsys.readouterr().out
    assert "cores" in printed and "| alter_view commits/s" in printed
    payload = json.loads(out.read_text())
    assert payload["machine"]["cores"] >= 1 and payload["machine"]["sqlite"]
    assert [r["name"] for r in payload["results"]] == ["alter_view_commits", "alter_view_sql_floor",
                                                      "alter_view_in_transactions", "load_view",
                                                      "load_view_after_commit", "load_view_after_change"]
    assert "| load_view p50" in md.read_text()



def run_results_md(tmp_path, md):
    """A quick run writing ``md``; returns the generated part it should hold, read from the run's JSON."""
    from benchmarks.report import results_markdown

    out = tmp_path / "run.json"
    assert main(["--quick", "--only", "alter_view", "--json", str(out), "--results-md", str(md)]) == 0
    return results_markdown(json.loads(out.read_text())).encode()


# written by hand, as RESULTS.md's analysis is: a Windows line end, a trailing space, non-ASCII, no final newline
HAND = "### alter_view at 0.20 \u00d7 raw\r\n\nbefore: 0.2 \u00b5s \n| table | row |"


@pytest.mark.parametrize("start", [
    "<!-- Written by hand from here to the end; python -m benchmarks --results-md keeps it. -->\n\n"
    "## Where targets are missed or close, and why\n\n",
    "## Where targets are missed or close, and why\n\n",  # a file written before the marker
], ids=["marker", "heading"])
def test_results_md_keeps_the_hand_written_analysis_byte_for_byte(tmp_path, start):
    """The analysis below the figures is written by hand: a run replaces what is above it, nothing of it."""
    hand = (start + HAND).encode()
    md = tmp_path / "RESULTS.md"
    md.write_bytes(b"# viewstore benchmark results\n\nold figures, replaced\n\n" + hand)
    generated = run_results_md(tmp_path, md)
    assert md.read_bytes() == generated + b"\n" + hand


def test_the_committed_results_md_marks_its_hand_written_part():
    """The marker sits where the generated part ends, so the next run keeps all of the analysis."""
    from benchmarks.report import HAND_MARKER, hand_part

    committed = (ROOT / "benchmarks" / "RESULTS.md").read_bytes()
    kept = hand_part(committed)
    assert kept.startswith(HAND_MARKER + b"\n\n## Where targets are missed or close, and why\n")
    assert b"## Reliability" in committed[:-len(kept)] and b"## Reliability" not in kept


def test_results_md_without_a_hand_written_part_is_replaced_whole(tmp_path):
    """Neither the marker nor the heading at the start of a line: nothing is kept (a mention is not a start)."""
    md = tmp_path / "RESULTS.md"
    md.write_text("# viewstore benchmark results\n\nsee ## Where targets are missed or close, and why\n")
    generated = run_results_md(tmp_path, md)
    assert md.read_bytes() == generated


def test_results_md_into_a_missing_file_of_a_missing_folder_is_the_generated_part(tmp_path):
    """As --json does, the folder is made: a full run is long to lose at its last step."""
    md = tmp_path / "new" / "RESULTS.md"
    generated = run_results_md(tmp_path, md)
    assert md.read_bytes() == generated


def test_the_reliability_run_reports_every_figure_at_tiny_sizes():
    """What ``--reliability`` does, with a few kills, operations and fuzz cases: every check the
    tests record reaches the report, so a renamed figure cannot break only the full run."""
    from benchmarks.reliability import reliability_markdown, run_reliability

    result = run_reliability({"VIEWSTORE_CRASH_KILLS": "3", "VIEWSTORE_LOAD_OPERATIONS": "40",
                              "VIEWSTORE_FUZZ_EXAMPLES": "3"})
    assert result["passed"], result["summary"]
    assert result["crash"]["kills"] == 3 and result["load"]["operations"] == 160
    assert result["load_busy"]["busy_errors"] > 0 and result["fuzz"]["cases"] > 0
    table = reliability_markdown(result)
    assert [line.split(":")[0] for line in table.splitlines()[2:]] == [
        "| crash", "| load", "| load with a 1 ms busy timeout", "| fuzz"]
    assert "failed" not in table


def test_a_failed_reliability_run_names_the_tests_that_failed():
    """A failure in the child run reaches the report (and the quick test's message) by its test's name,
    not as a count alone."""
    from benchmarks.reliability import _summary, reliability_markdown

    output = ("....F\n=== short test summary info ===\n"
              "FAILED tests/reliability/test_crash.py::test_kills - assert 1 > 3\n1 failed, 29 passed in 18.68s\n")
    summary = _summary(output)
    assert summary == "FAILED tests/reliability/test_crash.py::test_kills - assert 1 > 3; 1 failed, 29 passed in 18.68s"
    assert _summary("30 passed in 29.12s\n") == "30 passed in 29.12s"
    row = reliability_markdown({"passed": False, "summary": summary, "fuzz": {"cases": 3, "seconds": 1.0}})
    assert f"**failed** ({summary})" in row


@pytest.mark.spark
def test_the_spark_benchmarks_run_at_tiny_sizes(spark, tmp_path):
    results = run(list(SPARK), quick=True, spark=spark, workdir=tmp_path, say=lambda message: None)
    check(results, ["spark_register_views", "spark_events_dataframe"])
    assert not [d.name for d in spark.catalog.listDatabases() if d.name.startswith("bench_ns")]  # cleaned up


def test_results_md_says_it_kept_a_hand_written_part_only_when_it_did(tmp_path, capsys):
    """The run's last line says whether the analysis was kept: not for a file with none (planted,
    write_results_markdown answering True whatever it kept said it was kept)."""
    md = tmp_path / "RESULTS.md"
    md.write_text("# viewstore benchmark results\n\nold figures\n")
    run_results_md(tmp_path, md)
    assert capsys.readouterr().out.rstrip().endswith(f"Markdown: {md}")
    md.write_text("# old\n\n## Where targets are missed or close, and why\n\nkept\n")
    run_results_md(tmp_path, md)
    assert capsys.readouterr().out.rstrip().endswith(f"Markdown: {md} (its hand-written analysis kept)")
