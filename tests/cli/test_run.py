from __future__ import annotations

import pytest

from conformance.cli.run import CHECK_IDS, FAMILIES, compile_keyword, load_adapter
from conformance.errors import UsageError


def test_keyword_expressions_select_like_pytest() -> None:
    select = compile_keyword("gemini and not stream")
    assert select("gemini", "basic/get_time", "non_stream") is False  # "stream" is a substring of "non_stream"
    select = compile_keyword("(openai or anthropic) and get_time")
    assert select("openai_chat", "basic/get_time", "stream")
    assert select("anthropic", "basic/get_time", "non_stream")
    assert not select("gemini", "basic/get_time", "stream")
    assert not select("openai_chat", "basic/single_call", "stream")


def test_bad_keyword_expression_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not a valid expression"):
        compile_keyword("gemini and (")


def test_load_adapter_by_name_and_by_object_path() -> None:
    assert load_adapter("anthropic").name == "anthropic"
    assert load_adapter("conformance.adapters.gemini:ADAPTER").wire_format == "gemini"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nope", "unknown adapter"),
        ("no_such_module_xyz:ADAPTER", "cannot import"),
        ("conformance.adapters.gemini:MISSING", "has no attribute"),
        ("conformance.model:Tool", "lacks"),
    ],
)
def test_bad_adapter_specs_say_what_to_do(spec: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        load_adapter(spec)


def test_check_families_match_the_registry() -> None:
    from conformance.checks import FAMILIES as REGISTRY

    assert tuple(REGISTRY) == FAMILIES == tuple(CHECK_IDS)
