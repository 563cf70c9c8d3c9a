"""The pytest plugin (``conformance.pytest_plugin``), run in inner pytest sessions with ``pytester``.

Installed, the plugin loads through its ``pytest11`` entry point; from a checkout whose installed
metadata lacks it, the inner sessions load it with ``-p conformance.pytest_plugin``.
"""

from __future__ import annotations

import json
import os
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

import conformance
from conformance import pytest_plugin
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.loader import load_scenarios

pytest_plugins = ["pytester"]

INSTALLED = bool(metadata.entry_points(group="pytest11", name="conformance"))
"""Whether pytest loads the plugin by itself (the installed metadata has the entry point)."""
PLUGIN_ARGS: tuple[str, ...] = () if INSTALLED else ("-p", "conformance.pytest_plugin")
"""How a subprocess session loads it. An inline session is given the module object: ``-p`` would
import it again by name, and warn that it cannot rewrite its asserts once another test imported it."""

CLIENTS = """
import dataclasses
from collections.abc import Iterator

import pytest

from conformance.adapters import for_format
from conformance.clients.contract import Call
from conformance.clients.translator import TranslatorClient
from conformance.model import Response, StreamEvent

from tests._mutant_clients import REVERSED, Retrying

ANTHROPIC = TranslatorClient(for_format("anthropic"))


"""


def write_tests(pytester: pytest.Pytester, body: str, name: str = "test_cases") -> None:
    pytester.makepyfile(**{name: CLIENTS + textwrap.dedent(body)})


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An inner session in this interpreter. ``conformance`` is imported already, so an inner session that
    loads the plugin by its entry point (bare ``pytest``) cannot rewrite its asserts and says so: that
    warning is about this process, not about the plugin."""
    quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
    return pytester.runpytest("-p", "no:cacheprovider", *quiet, *args, plugins=[] if INSTALLED else [pytest_plugin])


def run_subprocess(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    """An inner session in its own interpreter, importing the ``conformance`` this session imports."""
    here = str(Path(conformance.__file__).resolve().parents[1])
    repo = str(Path(__file__).resolve().parents[1])  # CLIENTS imports tests._mutant_clients
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, repo, *filter(None, [os.environ.get("PYTHONPATH")])]))
    return pytester.runpytest_subprocess(*PLUGIN_ARGS, "-p", "no:cacheprovider", *args)


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("seconds",)}


# ---- items and ids -----------------------------------------------------------------------------


def test_one_item_per_scenario_wire_and_mode_with_readable_ids(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(client=ANTHROPIC, wires=["anthropic"], scenarios=["basic/get_time", "errors/*"])
        def test_client(conformance_case):
            conformance_case.check()

        @pytest.mark.conformance(adapter="hermes", scenarios=["basic/get_time"], modes=["stream"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester, "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert "test_cases.py::test_client[anthropic-basic/get_time-non_stream]" in ids
    assert "test_cases.py::test_client[anthropic-basic/get_time-stream]" in ids
    assert any(i.startswith("test_cases.py::test_client[anthropic-errors/") for i in ids)
    assert not any("openai" in i for i in ids)
    # an adapter's items are named by the traffic it declares (a prompt format here), one mode asked for
    assert [i for i in ids if "test_adapter" in i] == ["test_cases.py::test_adapter[hermes-basic/get_time-stream]"]


def test_passing_cases_pass_for_a_client_and_an_adapter(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(client=ANTHROPIC, scenarios=["basic/get_time", "multi_turn/*"])
        def test_client(conformance_case):
            conformance_case.check()

        @pytest.mark.conformance(adapter=for_format("openai_chat"), scenarios=["basic/*"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester)
    counts = outcomes(result)
    assert counts["passed"] >= 20
    assert set(counts) == {"passed"}


def test_the_pair_runs_once_per_process_for_all_its_modes(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        import pathlib

        CALLS = pathlib.Path(__file__).with_name("calls.log")  # the client runs in a worker process

        @dataclasses.dataclass(frozen=True)
        class Counting(Retrying):
            def complete(self, call):
                with CALLS.open("a") as log:
                    print(call.scenario, call.stream, file=log)
                return self.inner.complete(call)

        COUNTING = Counting(ANTHROPIC)

        @pytest.mark.conformance(client=COUNTING, scenarios=["basic/get_time"])
        def test_client(conformance_case):
            conformance_case.check()

        def test_zz_calls():
            assert CALLS.read_text().splitlines() == ["basic/get_time False", "basic/get_time False",
                                                      "basic/get_time True", "basic/get_time True"]
        """,
    )
    assert outcomes(run(pytester)) == {"passed": 3}


# ---- failures, gaps, unsupported, errors -------------------------------------------------------


def test_a_failing_case_prints_each_finding_and_the_cassette(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(client=Retrying(ANTHROPIC), scenarios=["basic/get_time"], modes=["non_stream"])
        def test_client(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester)
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines(
        [
            "*conformance FAIL: retrying/anthropic basic/get_time non_stream*",
            "[[]changes meaning[]] Sends 2 requests for one turn: a retry the caller did not ask for.",
            "  to do: retry only when the caller asks for it",
            "*client.one_request: FAIL*",
            "  client.one_request at $ (turn 0): the client sent 2 requests for one turn*",
            "*expected: 1",
            "*actual:   2",
            "*cassette: *cassettes/anthropic/basic/get_time.yaml",
        ]
    )


def test_a_client_sending_results_in_reverse_order_fails_with_the_order_defect(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(client=REVERSED, scenarios=["multi_turn/parallel_results"], modes=["non_stream"])
        def test_client(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester)
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines(
        [
            "*conformance FAIL: reversed/openai_chat multi_turn/parallel_results non_stream*",
            "[[]changes meaning[]] Sends tool results in a different order than the calls they answer.",
            "  to do: send results in the order of the calls they answer",
            "  the calls:*call_MVUwsZoyWEOLPwd2D*, call_midcYFQgrV0AfFuLK*",
            "  the results sent:*call_midcYFQgrV0AfFuLK*, call_MVUwsZoyWEOLPwd2D*",
            "findings:",
        ]
    )


def test_a_known_gap_is_xfail_with_its_reason_and_a_passing_gap_fails_as_stale(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        GAP = {"client.one_request": "retries hidden (BUG-7)"}

        @pytest.mark.conformance(client=Retrying(ANTHROPIC, known_gaps=GAP), scenarios=["basic/get_time"])
        def test_gap(conformance_case):
            conformance_case.check()

        """,
    )
    pytester.makepyfile(
        test_stale=CLIENTS
        + textwrap.dedent(
            """
            @dataclasses.dataclass(frozen=True)
            class Fixed(Retrying):
                def complete(self, call):
                    return self.inner.complete(call)

            FIXED = Fixed(ANTHROPIC, name="fixed", known_gaps={"client.one_request": "retries hidden (BUG-7)"})

            @pytest.mark.conformance(client=FIXED, scenarios=["basic/get_time"], modes=["non_stream"])
            def test_stale(conformance_case):
                conformance_case.check()
            """
        )
    )
    result = run(pytester, "-rxf")
    assert outcomes(result) == {"xfailed": 2, "failed": 1}
    assert "XFAIL test_cases.py::test_gap[anthropic-basic/get_time-stream] - known gap: retries hidden (BUG-7)" in (
        result.outlines
    )
    result.stdout.fnmatch_lines(
        [
            "conformance STALE: fixed/anthropic basic/get_time non_stream",
            "client.one_request: STALE (*retries hidden (BUG-7)*passes now): remove the known gap",
        ]
    )


def test_an_unsupported_case_is_skipped_with_the_reason(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        NO_PARALLEL = dataclasses.replace(
            for_format("openai_chat"), capabilities=for_format("openai_chat").capabilities - {"parallel_tool_calls"}
        )

        @pytest.mark.conformance(adapter=NO_PARALLEL, scenarios=["basic/parallel_calls", "basic/get_time"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester, "-rs")
    assert outcomes(result) == {"passed": 2, "skipped": 2}
    result.stdout.fnmatch_lines(["SKIPPED *requires parallel_tool_calls, which openai_chat does not declare*"])


def test_an_error_case_fails_with_its_message(pytester: pytest.Pytester, tmp_path: Path) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(adapter="anthropic", scenarios=["basic/get_time"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester, f"--conformance-cassette-dir={tmp_path / 'empty'}")
    assert outcomes(result) == {"failed": 2}
    result.stdout.fnmatch_lines(["*conformance ERROR: anthropic basic/get_time*", "*missing cassette *get_time.yaml*"])


def test_a_bad_marker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(client=ANTHROPIC, adapter="anthropic")
        def test_both(conformance_case):
            conformance_case.check()
        """,
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*test_both: @pytest.mark.conformance takes client=, adapter= or command= (one of them), or server=*"]
    )


# ---- conformance_server ------------------------------------------------------------------------


def test_the_server_fixture_plays_one_scenario_and_keeps_what_it_received(pytester: pytest.Pytester) -> None:
    write_tests(
        pytester,
        """
        import httpx

        BODY = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "time?"}]}

        @pytest.mark.conformance_server(scenario="basic/get_time", wire="anthropic")
        def test_marker(conformance_server):
            assert conformance_server.base_url.startswith("http://127.0.0.1:")
            answer = httpx.post(conformance_server.base_url + "/v1/messages", json=BODY)
            assert answer.status_code == 200
            assert [r.path for r in conformance_server.requests] == ["/v1/messages"]
            assert len(conformance_server.played) == 1
            decoded = for_format("anthropic").response_from_wire(answer.json())
            assert [c.name for c in decoded.tool_calls] == ["getTime"]

        @pytest.mark.parametrize(
            "conformance_server", [{"scenario": "basic/get_time", "wire": "openai_chat"}], indirect=True
        )
        def test_indirect(conformance_server):
            body = {"model": "m", "messages": [{"role": "user", "content": "time?"}]}
            answer = httpx.post(conformance_server.base_url + "/v1/chat/completions", json=body)
            assert answer.status_code == 200
            assert [r.path for r in conformance_server.requests] == ["/v1/chat/completions"]

        def test_unchosen(conformance_server):
            pass
        """,
    )
    result = run(pytester)
    assert outcomes(result) == {"passed": 2, "errors": 1}
    result.stdout.fnmatch_lines(["*conformance_server needs a scenario and a wire*"])


# ---- options -----------------------------------------------------------------------------------

ADAPTER_TEST = """
@pytest.mark.conformance(adapter="anthropic", scenarios=["basic/get_time"])
def test_adapter(conformance_case):
    conformance_case.check()
"""


def provenance(cassette: Path) -> dict[str, str]:
    data = json.loads(cassette.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    block = data["provenance"]
    assert isinstance(block, dict)
    return block


def test_record_mode_none_once_new_rewrite(pytester: pytest.Pytester, tmp_path: Path) -> None:
    write_tests(pytester, ADAPTER_TEST)
    cassettes = tmp_path / "cassettes"
    cassette = cassettes / "anthropic" / "basic" / "get_time.yaml"
    option = f"--conformance-cassette-dir={cassettes}"
    # none: replay only, the missing cassette is an error
    assert outcomes(run(pytester, option)) == {"failed": 2}
    assert not cassette.exists()
    # once: recorded against the emulator, then replayed
    assert outcomes(run(pytester, option, "--conformance-record-mode=once")) == {"passed": 2}
    assert provenance(cassette)["mode"] == "emulator"
    # once and new keep a cassette that loads (an edit of its provenance shows whether it was recorded again)
    data = json.loads(cassette.read_text(encoding="utf-8"))
    data["provenance"]["model"] = "kept-model"
    cassette.write_text(json.dumps(data), encoding="utf-8")
    for mode in ("once", "new"):
        assert outcomes(run(pytester, option, f"--conformance-record-mode={mode}")) == {"passed": 2}
        assert provenance(cassette)["model"] == "kept-model"
    # rewrite records it again
    assert outcomes(run(pytester, option, "--conformance-record-mode=rewrite")) == {"passed": 2}
    assert provenance(cassette)["model"] != "kept-model"
    # a cassette that does not load: once keeps it (an error), new records it again
    cassette.write_text("interactions: [oops\n", encoding="utf-8")
    assert outcomes(run(pytester, option, "--conformance-record-mode=once")) == {"failed": 2}
    assert outcomes(run(pytester, option, "--conformance-record-mode=new")) == {"passed": 2}
    assert "interactions: [oops" not in cassette.read_text(encoding="utf-8")


def test_record_against_a_live_url_with_the_key_from_an_env_var(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tests(pytester, ADAPTER_TEST)
    cassettes = tmp_path / "cassettes"
    scenario = next(s for s in load_scenarios().scenarios if s.id == "basic/get_time")
    script = EmulatorScript(scenario_id=scenario.id, replies=tuple(t.reply for t in scenario.turns))
    options = [f"--conformance-cassette-dir={cassettes}", "--conformance-record-mode=once"]
    with Emulator(script=script) as provider:  # the "live" provider, on loopback
        live = [f"--conformance-live-url={provider.base_url}", "--conformance-api-key-env=MY_KEY"]
        monkeypatch.delenv("MY_KEY", raising=False)
        result = run(pytester, *options, *live)
        assert outcomes(result) == {"failed": 2}
        result.stdout.fnmatch_lines(["*environment variable MY_KEY (--conformance-api-key-env) is not set*"])
        monkeypatch.setenv("MY_KEY", "sk-test-live-key-0123456789")
        assert outcomes(run(pytester, *options, *live)) == {"passed": 2}
        assert provider.requests, "the recording went to the live URL"
        assert provider.requests[0].headers.get("x-api-key") == "sk-test-live-key-0123456789"
    cassette = cassettes / "anthropic" / "basic" / "get_time.yaml"
    assert provenance(cassette)["mode"] == "live"
    text = cassette.read_text(encoding="utf-8")
    assert "sk-test-live-key-0123456789" not in text


NETWORK_TEST = """
import socket

import pytest

from conformance.errors import NetworkBlockedError


def test_connect():
    with pytest.raises(NetworkBlockedError, match="only loopback"):
        socket.create_connection(("192.0.2.1", 9), timeout=0.1)


def test_unpatched():
    assert socket.getaddrinfo.__module__ == "socket"
"""


def test_block_network_is_on_by_default_and_can_be_turned_off(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_net=NETWORK_TEST)
    # subprocesses: this session's own guard (conftest.py) must not stand in for the plugin's
    result = run_subprocess(pytester, monkeypatch, "-rf")
    assert outcomes(result) == {"passed": 1, "failed": 1}
    result.stdout.fnmatch_lines(["FAILED test_net.py::test_unpatched*"])
    result = run_subprocess(pytester, monkeypatch, "--no-conformance-block-network", "-k", "unpatched")
    assert outcomes(result) == {"passed": 1, "deselected": 1}
    result = run_subprocess(pytester, monkeypatch, "--conformance-block-network", "-k", "connect")
    assert outcomes(result) == {"passed": 1, "deselected": 1}


MIXED = """
GAP = {"client.one_request": "retries hidden (BUG-7)"}

@pytest.mark.conformance(client=Retrying(ANTHROPIC, known_gaps=GAP), scenarios=["basic/get_time"])
def test_gap(conformance_case):
    conformance_case.check()

@pytest.mark.conformance(client=Retrying(ANTHROPIC), scenarios=["basic/get_time"])
def test_fail(conformance_case):
    conformance_case.check()

@pytest.mark.conformance(adapter="openai_chat", scenarios=["basic/*"])
def test_adapter(conformance_case):
    conformance_case.check()
"""


def read_report(report_dir: Path) -> dict[str, object]:
    assert sorted(p.name for p in report_dir.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    data = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def case_keys(data: dict[str, object]) -> set[tuple[str, str, str, str]]:
    cases = data["cases"]
    assert isinstance(cases, list)
    return {(c["adapter"], c["scenario"], c["mode"], c["status"]) for c in cases}


def test_the_report_dir_holds_every_case(pytester: pytest.Pytester, tmp_path: Path) -> None:
    write_tests(pytester, MIXED)
    result = run(pytester, f"--conformance-report-dir={tmp_path / 'out'}")
    counts = outcomes(result)
    assert counts["xfailed"] == 2 and counts["failed"] == 2
    data = read_report(tmp_path / "out")
    keys = case_keys(data)
    assert len(keys) == sum(counts.values())
    assert ("retrying/anthropic", "basic/get_time", "stream", "xfail") in keys
    assert ("retrying/anthropic", "basic/get_time", "non_stream", "fail") in keys
    assert ("openai_chat", "basic/get_time", "stream", "pass") in keys
    failing = next(c for c in data["cases"] if c["status"] == "fail")  # type: ignore[attr-defined]
    assert failing["cassette"].endswith("cassettes/anthropic/basic/get_time.yaml")
    assert any(check["check"] == "client.one_request" for check in failing["checks"])


def test_under_xdist_the_controller_writes_every_case(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    write_tests(pytester, MIXED)
    single = run(pytester, f"--conformance-report-dir={tmp_path / 'one'}")
    result = run_subprocess(pytester, monkeypatch, "-n", "2", f"--conformance-report-dir={tmp_path / 'two'}")
    result.stdout.fnmatch_lines(["*2 workers*"])
    assert outcomes(result) == outcomes(single)
    assert case_keys(read_report(tmp_path / "two")) == case_keys(read_report(tmp_path / "one"))


def test_own_scenarios_and_cassette_dirs(pytester: pytest.Pytester, tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    (scenarios / "mine").mkdir(parents=True)
    bundled = Path(conformance.__file__).resolve().parents[1] / "scenarios" / "basic" / "get_time.yaml"
    (scenarios / "mine" / "time.yaml").write_text(bundled.read_text(encoding="utf-8"), encoding="utf-8")
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(adapter="anthropic", scenarios=["mine/*"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    options = [f"--conformance-scenarios-dir={scenarios}", f"--conformance-cassette-dir={tmp_path / 'cassettes'}"]
    result = run(pytester, *options, "--conformance-record-mode=once", "-v")
    assert outcomes(result) == {"passed": 2}
    result.stdout.fnmatch_lines(["*test_adapter?anthropic-mine/time-stream? PASSED*"])
    assert (tmp_path / "cassettes" / "anthropic" / "mine" / "time.yaml").is_file()


def test_a_users_scenario_starts_its_command_only_when_allowed(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/scenarios.md, trust: a scenario of --conformance-scenarios-dir is not bundled; its MCP
    server starts only with --conformance-allow-commands or the ini option."""
    monkeypatch.delenv("CONFORMANCE_ALLOW_COMMANDS", raising=False)
    scenarios = tmp_path / "scenarios"
    (scenarios / "mcp").mkdir(parents=True)
    bundled = Path(conformance.__file__).resolve().parents[1] / "scenarios" / "mcp" / "fixed_clock.yaml"
    (scenarios / "mcp" / "fixed_clock.yaml").write_bytes(bundled.read_bytes())  # the bundled cassette fits
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(adapter="openai_chat", scenarios=["mcp/fixed_clock"], modes=["non_stream"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    cassettes = Path(conformance.__file__).resolve().parents[1] / "cassettes"
    options = [f"--conformance-scenarios-dir={scenarios}", f"--conformance-cassette-dir={cassettes}"]
    refused = run(pytester, *options)
    assert outcomes(refused) == {"failed": 1}
    refused.stdout.fnmatch_lines(["*fixed_clock.yaml: not started:*--conformance-allow-commands*"])
    assert outcomes(run(pytester, *options, "--conformance-allow-commands")) == {"passed": 1}
    pytester.makeini("[pytest]\nconformance_allow_commands = true\n")
    assert outcomes(run(pytester, *options)) == {"passed": 1}


def test_the_bundled_mcp_server_runs_over_streamable_http_when_asked(pytester: pytest.Pytester) -> None:
    """docs/mcp.md, Streamable HTTP: --conformance-mcp-transport http is taken and the bundled scenario
    passes with it on the same cassette (tests/mcp_bridge/test_transports.py shows the transport itself)."""
    write_tests(
        pytester,
        """
        @pytest.mark.conformance(adapter="openai_chat", scenarios=["mcp/fixed_clock"], modes=["non_stream"])
        def test_adapter(conformance_case):
            conformance_case.check()
        """,
    )
    assert outcomes(run(pytester, "--conformance-mcp-transport=http")) == {"passed": 1}


def test_the_entry_point_names_the_plugin_module() -> None:
    """Installed, pytest loads ``pytest11`` entry points by themselves (a checkout cannot show it)."""
    import tomllib

    pyproject = tomllib.loads((Path(conformance.__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {"conformance": "conformance.pytest_plugin"}
    assert all(callable(getattr(pytest_plugin, hook)) for hook in ("pytest_addoption", "pytest_configure"))


def test_a_deviated_case_is_skipped_saying_what_the_model_did() -> None:
    # the model behind a live server did not do what the scenario asks: the model's choice, never a
    # failure of the server (conformance.verdicts), so the test is skipped with what the model did
    from typing import Any, cast

    from conformance.verdicts import CaseResult, CheckVerdict

    said = "the model answered text instead of calling get_weather"
    case = CaseResult(
        adapter="llama/openai_chat",
        scenario="basic/get-weather",
        mode="stream",
        status="deviated",
        message=f"model deviated: {said}",  # as conformance.servers.server says it, on the case and its check
        checks=(
            CheckVerdict(check="server.shape", status="pass"),
            CheckVerdict(check="server.model", status="deviated", message=f"model deviated: {said}"),
        ),
    )
    unused = cast(Any, None)
    conformance_case = pytest_plugin.ConformanceCase(
        wire="openai_chat",
        scenario="basic/get-weather",
        mode="stream",
        _spec=unused,
        _plugin=unused,
        _item=unused,
        _result=case,
    )
    with pytest.raises(pytest.skip.Exception, match=f"^model deviated: {said}$"):
        conformance_case.check()
