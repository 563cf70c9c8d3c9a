"""``conformance.traffic.safe_yaml.check_bounds`` walks libyaml's events without building anything and
stops at the stream's end, whatever the event classes are."""

from __future__ import annotations

import pytest

from conformance.errors import InputLimitError
from conformance.traffic import safe_yaml
from conformance.traffic.safe_yaml import Limits, check_bounds


def test_the_walk_counts_nodes_and_stops_at_a_bound() -> None:
    check_bounds(b"a: [1, 2, 3]\n")
    with pytest.raises(InputLimitError, match="too many nodes"):
        check_bounds(b"a: [1, 2, 3]\n", limits=Limits(yaml_nodes=3))


def test_the_walk_ends_at_the_streams_end_when_no_event_class_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another import of ``yaml`` (pytester's inline runs restore ``sys.modules`` while libyaml's C module
    stays) gives events of other classes: the walk must end, not loop past the stream's end."""

    class Other:
        pass

    for name in ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent", "MappingEndEvent", "SequenceEndEvent"):
        monkeypatch.setattr(safe_yaml, name, Other)
    monkeypatch.setattr(safe_yaml, "AliasEvent", Other)
    monkeypatch.setattr(safe_yaml, "StreamEndEvent", Other)
    check_bounds(b"a: [1, 2, 3]\n")  # returns: the test would hang without the end-of-stream guard
