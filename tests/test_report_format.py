"""Small presentation rules of the report (labels and table cells)."""

import math

from o2ksim.report.figures import wrap_label
from o2ksim.report.immediate import _cell


def test_tick_labels_break_at_spaces_never_inside_a_word():
    assert wrap_label("LXF&W-bf/immediate") == "LXF&W-bf/immediate"
    assert wrap_label("fcfs backfill with immediate service", 16) == "fcfs backfill\nwith immediate\nservice"


def test_immediate_table_counts_print_in_full():
    assert _cell(1701.0) == "1,701"
    assert _cell(12.345) == "12.3"
    assert _cell(math.nan) == "–"

