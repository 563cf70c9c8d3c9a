"""Reading a JSON report back (``report.json``, for ``--last-failed`` and ``merge-reports``): the
report is an untrusted file, read with the bounds of cassettes (``conformance.limits``) and its
``report_format`` checked, so a hostile or mangled file is one usage error naming it, never a
``RecursionError`` or gigabytes in memory. The one function here does the file I/O."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.errors import InputLimitError, UsageError
from conformance.limits import current, read_bounded
from conformance.reporting._data import MAX_DEPTH, REPORT_FORMAT
from conformance.traffic.safe_yaml import nests_deeper

__all__ = ["REPORT_FRAME", "load_report"]

REPORT_FRAME = 16
"""Levels of a JSON report around a value it holds (a finding's ``expected`` is at level 7, a
cassette's provenance block at level 4): a report read back nests at most this many levels more
than a value may (``MAX_DEPTH``, or the ``nesting_depth`` limit when higher)."""


def load_report(path: Path, where: str) -> Any:
    """The parsed JSON report at ``path``, read with the bounds of cassettes (``conformance.limits``):
    a file larger than ``yaml_expanded_bytes`` is refused before it is read whole, one nesting deeper
    than a report the suite writes can (``REPORT_FRAME``) before it is parsed, and ``report_format``
    must be the whole number this suite writes. ``UsageError`` starts with ``where`` (the file, after
    the option that reads it), names the limit and says what to do; ``FileNotFoundError`` propagates."""
    limits = current()
    how = InputLimitError.how_to_raise
    try:
        raw = read_bounded(path, where)
    except IsADirectoryError:
        raise UsageError(f"{where}: a folder; give the report.json a run wrote") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UsageError(f"{where}: cannot be read ({exc.strerror or exc}); give the report.json a run wrote") from None
    depth = max(limits.nesting_depth, MAX_DEPTH) + REPORT_FRAME
    if nests_deeper(raw, depth):
        raise UsageError(
            f"{where}: nests deeper than a conformance report can ({depth} levels): past the limit "
            f"nesting_depth={limits.nesting_depth} plus the report's own {REPORT_FRAME}; give the report.json a "
            f"run wrote, unedited ({how('nesting_depth')})"
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{where}: not JSON ({exc}); give the report.json a run wrote, unedited") from None
    version = data.get("report_format") if isinstance(data, dict) else None
    if type(version) is not int or version != REPORT_FORMAT:
        shown = (
            f"report_format {json.dumps(version)}"
            if isinstance(data, dict) and "report_format" in data
            else "no report_format"
        )
        raise UsageError(
            f"{where}: not a conformance JSON report of format {REPORT_FORMAT} ({shown}); give the "
            "report.json a run of this conformance wrote"
        )
    return data
