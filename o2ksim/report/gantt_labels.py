"""Labels of a Gantt chart that never overlap.

Every label is an annotation at an anchor with an offset in points.  Once the
figure is laid out, :meth:`Labels.place` measures each label's box in the
order of its priority (arrivals, reservations, what happened to a job, job
ids) and keeps it where it overlaps none placed before -- trying its nudges
(offsets further up or down) in turn; a label that fits nowhere is hidden and
counted.  A label that would run past the right edge is put to the left of its
anchor.  The layout is then frozen, so the boxes measured are the boxes
drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NUDGES = (0.0, 9.0, -9.0, 18.0, -18.0)
"""Vertical offsets (points) a label tries, in order."""

BOX = {"facecolor": "white", "alpha": 0.85, "linewidth": 0, "pad": 0.6}


@dataclass
class Labels:
    """The labels of one figure, placed together by :meth:`place`."""

    items: list[tuple[int, int, Any, tuple[float, ...]]] = field(default_factory=list)

    def add(self, ax: Any, x: float, y: float, text: str, *, priority: int,
            nudges: tuple[float, ...] = NUDGES, dx: float = 0.0, dy: float = 0.0,
            xycoords: Any = "data", **kw: Any) -> Any:  # fmt: skip
        """An annotation at ``(x, y)`` offset by ``(dx, dy)`` points; lower priority first."""
        kw.setdefault("fontsize", 7)
        kw.setdefault("ha", "left")
        kw.setdefault("va", "center")
        kw.setdefault("zorder", 7)
        kw.setdefault("bbox", BOX)
        ann = ax.annotate(text, (x, y), xycoords=xycoords, xytext=(dx, dy),
                          textcoords="offset points", annotation_clip=False, **kw)  # fmt: skip
        self.items.append((priority, len(self.items), ann, nudges))
        return ann

    def place(self, fig: Any) -> list[str]:
        """Lay the figure out, keep each label where it overlaps no other; returns the texts
        of the labels hidden because they fitted nowhere."""
        fig.draw_without_rendering()  # the constrained layout, once
        fig.set_layout_engine("none")  # frozen: the boxes measured are the boxes drawn
        renderer = fig.canvas.get_renderer()
        placed = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()]
        placed += [leg.get_window_extent(renderer) for leg in fig.legends]
        hidden = []
        right = max(ax.get_window_extent(renderer).x1 for ax in fig.axes)
        for _prio, _k, ann, nudges in sorted(self.items, key=lambda i: (i[0], i[1])):
            if ann.get_window_extent(renderer).x1 > right and ann.get_ha() == "left":
                ann.set_ha("right")  # past the right edge: to the left of its anchor
                ann.xyann = (-ann.xyann[0], ann.xyann[1])
            x0, y0 = ann.xyann
            for dy in nudges:
                ann.xyann = (x0, y0 + dy)
                box = ann.get_window_extent(renderer).padded(1.0)
                if not any(box.overlaps(p) for p in placed):
                    placed.append(box)
                    break
            else:
                ann.xyann = (x0, y0)
                ann.set_visible(False)
                hidden.append(ann.get_text())
        return hidden


__all__ = ["BOX", "NUDGES", "Labels"]
