"""Running scenarios: the conversation driver and the runner.

- ``conversation``: drive one scenario through one adapter over a ``Transport``, turn by turn
  (the one path shared by recording and replay);
- ``runner``: cases = adapters x scenarios x modes, each with a timeout, replayed from cassettes,
  judged by the check families (``conformance.checks``) into verdicts (``conformance.verdicts``);
- ``recording`` and ``live``: record cassettes from the emulator or a live provider; a live model's
  deviations from the scenario, and a live cassette judged on what was recorded;
- ``baseline``: the known defects a project accepts, by signature (``--baseline``): parsed, validated, applied
  to a run's verdicts, and written back (``--update-baseline``).
"""

from __future__ import annotations

__all__: list[str] = []
