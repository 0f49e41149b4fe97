"""Scrolling up by what is shown, where the entries coming into view count by estimates.

A resumed history (and an answer at a width it was never laid out at) counts the entries no
frame has drawn by an estimate; drawing one replaces its estimate with its real height. A
move up by N lines computed on the estimates lands N *estimated* lines higher: once the
entries in view are drawn, the line that was at the top is no longer N rows below the new
top (a page up skipped lines, finding T34). So the move is measured from the end of the
transcript, which the entries above the old top do not affect: the new view is drawn (in
memory) and placed again until the heights it shows hold still. Nothing else runs in
between (this is one key press), so every change of the total comes from those entries.
Moving down needs none of this: the entries above the view do not change when it moves.
Pure: no prompt_toolkit.
"""

from __future__ import annotations

from minicode.cli.frontends.tui.view import Scroll, Transcript

__all__ = ["MEASURE_PASSES", "scroll_up"]

MEASURE_PASSES = 16
"""Each pass draws entries that came into view because the ones below turned out shorter;
a page of a real history settles in two or three."""


def scroll_up(transcript: Transcript, scroll: Scroll, width: int, height: int, lines: int) -> int:
    """Move ``scroll`` up by ``lines`` of the transcript as drawn at ``width`` x ``height``:
    the line now at the top ends ``lines`` rows lower (or the view is at the top). Returns the
    transcript's line count after the entries in the new view were measured."""
    total = transcript.total_lines(width)
    from_end = total - scroll.view_top(total, height) + lines
    for _ in range(MEASURE_PASSES):
        transcript.visible(width, max(0, total - from_end), height)
        measured = transcript.total_lines(width)
        if measured == total:
            break
        scroll.settled(measured - total)  # estimates that became heights: not new output
        total = measured
    scroll.move_to(max(0, total - from_end), total, height)
    return total
