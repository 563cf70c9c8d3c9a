"""The scenario format: provider-neutral YAML files, one tool-calling behaviour each.

- ``values``: the scenario as frozen values (``Scenario``, ``Turn``, ``Reply``, expectations);
- ``loader``: files -> values, the I/O edge (``load_scenarios``, ``load_scenario``);
- ``problems``: a problem in a scenario file, located by line, column and JSON pointer;
- ``_positioned_yaml``: YAML text -> JSON-shaped data that remembers where each node was;
- ``_schema`` and ``_rules``: what JSON Schema says, then what it cannot say (docs/scenarios.md);
- ``_build``: valid data -> values, with the ``expect`` defaults applied.

The JSON Schema itself is ``conformance/schemas/scenario.schema.json``.
"""

from __future__ import annotations

__all__: list[str] = []
