"""The terminal: what a run shows while it goes and at its end (an I/O edge, like ``reporting/``).

- ``output``: the terminal's width, colour (``NO_COLOR``, ``FORCE_COLOR``), cutting and wrapping text
  in display cells, and an output that goes quiet when its reader goes away (``| head``);
- ``summary``: the lines a run prints at its end: the defects, the failing cases with their findings
  and rerun commands, the matrix and the counts per column.
"""

from __future__ import annotations

__all__: list[str] = []
