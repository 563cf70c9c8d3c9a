"""One pipeline for every kind of target: what ``conformance run`` and ``conformance certify`` share,
below the command line (which only parses its arguments into a ``Plan`` and a target).

- ``selection``: scenario specs and folders, ``-k``, ``--checks`` (families and check ids), report
  formats, ``--jobs`` and ``--shard``, and why a selection holds no case;
- ``ci``: baselines (``--baseline``, ``--update-baseline``, ``--strict-baseline``) and
  ``--last-failed`` (docs/ci.md);
- ``plan``: the ``Plan``, every choice of one run as plain values;
- ``targets``: the ``Target`` protocol (what a kind of target gives the pipeline) and its kinds:
  ``AdapterTarget`` (``conformance.run.runner``) and ``ClientTarget`` (``conformance.clients.harness``);
- ``run``: ``run_target(target, plan, out)``: usage errors before anything runs, progress, Ctrl-C
  and internal errors (``Finished``), then the finish;
- ``finish``: the end of a run: the terminal's lines, the reports, the baseline written, the exit code.
"""

from __future__ import annotations

__all__: list[str] = []
