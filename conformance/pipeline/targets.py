"""The kinds of target one pipeline runs (``conformance.pipeline.run.run_target``): what each gives it.

A target owns its columns (adapter-like values with a ``.name``: the report's columns) and turns a
``Plan`` into its own options; the pipeline does the rest (usage errors before anything runs,
progress, Ctrl-C, the finish). ``AdapterTarget`` runs adapters replayed from cassettes
(``conformance.run.runner.run_suite``); ``ClientTarget`` certifies a black-box client over loopback
(``conformance.clients.harness.certify``); ``ServerTarget`` a model server at a URL
(``conformance.servers.server.certify_server``); ``GatewayTarget`` a gateway calling the emulator
upstream (``conformance.servers.gateway.certify_gateway``). A server or a gateway is one more class of the same shape
over ``conformance.servers``: its options from the plan (``dataclasses.replace(self.options,
select=plan.select, shard=plan.shard, ...)``), ``columns`` (``server_columns``), ``case_count``
(``server_case_count``), ``run`` (``certify_server(plan.scenarios, options, progress=progress,
problems=plan.problems)``), ``partial`` (``server_result`` of the cases that finished), the words that
name it in a rerun (``["certify", "--server", url, "--wires", wire]``) and ``close``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from conformance.errors import UsageError

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter
    from conformance.checks.equivalences import EquivalenceTable
    from conformance.clients.harness import CertifyOptions
    from conformance.pipeline.plan import Plan
    from conformance.run.runner import RunOptions
    from conformance.servers.gateway import GatewayOptions
    from conformance.servers.server import ServerOptions
    from conformance.verdicts import CaseResult, RunResult

__all__ = [
    "AdapterTarget",
    "ClientTarget",
    "GatewayTarget",
    "ServerTarget",
    "Target",
    "client_rerun_words",
    "command_rerun_words",
    "load_client",
    "load_command",
    "read_equivalences",
]

Progress = Callable[["CaseResult"], None]


class Target(Protocol):
    """What a kind of target gives the pipeline."""

    @property
    def label(self) -> str:
        """What the run's last line starts with (``litellm: ``; "" for adapters)."""
        ...

    @property
    def noun(self) -> str:
        """What the columns are, in "selects no case of ... scenarios x N <noun>"."""
        ...

    @property
    def known(self) -> str:
        """More names to choose from when nothing is selected (e.g. the wires a client declares)."""
        ...

    @property
    def columns(self) -> Sequence[Adapter]:
        """The report's columns, in order."""
        ...

    def case_count(self, plan: Plan) -> int:
        """How many cases ``plan`` selects (of its shard, when it has one)."""
        ...

    def run(self, plan: Plan, progress: Progress) -> RunResult:
        """Run every case ``plan`` selects, each passed to ``progress`` as it finishes."""
        ...

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        """The result of a run that stopped early (Ctrl-C, an internal error) with ``cases`` finished."""
        ...

    def rerun_words(self, case: CaseResult) -> list[str]:
        """How the command that reruns ``case`` names the subcommand and the target (after ``conformance``)."""
        ...

    def close(self) -> None:
        """Let go of what the target holds (a driver's child process); the run calls it once, at its end."""
        ...


@dataclass(frozen=True, kw_only=True)
class AdapterTarget:
    """Adapters replayed from cassettes (``conformance run``); ``specs``: how each was named on the
    command line (a rerun names it again), by adapter name."""

    adapters: tuple[Adapter, ...]
    specs: dict[str, str] = field(default_factory=dict)
    label: str = ""
    noun: str = "adapters"
    known: str = ""

    @property
    def columns(self) -> Sequence[Adapter]:
        return self.adapters

    def options(self, plan: Plan) -> RunOptions:
        """The runner's options for ``plan`` (the families an adapter is judged by)."""
        from conformance.checks import FAMILIES
        from conformance.run.runner import RunOptions

        return RunOptions(
            user_cassette_dirs=plan.user_cassette_dirs,
            record_args=plan.record_args,
            families=tuple(f for f in plan.families if f in FAMILIES),
            checks=plan.checks,
            timeout=plan.timeout,
            fail_fast=plan.fail_fast,
            exhaustive=plan.exhaustive,
            select=plan.select,
            jobs=plan.jobs,
            shard=plan.shard,
        )

    def case_count(self, plan: Plan) -> int:
        from conformance.run.runner import chosen_pairs, pair_modes

        options = self.options(plan)
        return sum(len(pair_modes(s, a, options)) for a, s in chosen_pairs(self.adapters, plan.scenarios, options))

    def run(self, plan: Plan, progress: Progress) -> RunResult:
        from conformance.run.runner import run_suite

        options = self.options(plan)
        return run_suite(plan.scenarios, self.adapters, options, progress=progress, problems=plan.problems)

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        from conformance.run.runner import run_result

        return run_result(self.adapters, plan.scenarios, cases, problems=plan.problems)

    def rerun_words(self, case: CaseResult) -> list[str]:
        return ["run", "--adapter", self.specs.get(case.adapter, case.adapter)]

    def close(self) -> None:
        return None


@dataclass(frozen=True, kw_only=True)
class ClientTarget:
    """A black-box client (a driver around a library) certified over loopback (``conformance certify
    --client``): its wires (None: every wire it declares), how it was loaded (``spec``, ``python``,
    ``intercept``: a rerun loads it the same way) and the equivalences its reports are judged by."""

    client: Any
    spec: str
    command: bool = False
    """``spec`` is a driver command (``--command``: any language), not a Python ``MODULE:OBJECT``."""
    python: str | None = None
    intercept: bool = False
    wires: tuple[str, ...] | None = None
    equivalences: EquivalenceTable | None = None
    noun: str = "wires"

    @property
    def label(self) -> str:
        return f"{self.client.name}: "

    @property
    def known(self) -> str:
        return f"{self.client.name} declares the wires {', '.join(self.client.wires)}"

    @property
    def columns(self) -> Sequence[Adapter]:
        from conformance.clients.harness import client_adapter

        return [client_adapter(self.client, w) for w in self.client.wires if self.wires is None or w in self.wires]

    def options(self, plan: Plan) -> CertifyOptions:
        """The harness's options for ``plan``."""
        from conformance.checks import FAMILIES
        from conformance.clients.harness import CertifyOptions

        return CertifyOptions(
            user_cassette_dirs=plan.user_cassette_dirs,
            record_args=plan.record_args,
            wires=self.wires,
            families=tuple(f for f in plan.families if f in FAMILIES),
            checks=plan.checks,
            timeout=plan.timeout,
            select=plan.select,
            fail_fast=plan.fail_fast,
            model=plan.model,
            intercept=self.intercept,
            equivalences=self.equivalences,
            jobs=plan.jobs,
            shard=plan.shard,
        )

    def case_count(self, plan: Plan) -> int:
        from conformance.clients.harness import case_modes, chosen_pairs

        options = self.options(plan)
        return sum(len(case_modes(c, s, options)) for c, s in chosen_pairs(self.columns, plan.scenarios, options))

    def run(self, plan: Plan, progress: Progress) -> RunResult:
        from conformance.clients.harness import certify

        return certify(plan.scenarios, self.client, self.options(plan), progress=progress, problems=plan.problems)

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        from conformance.run.runner import run_result

        return run_result(
            self.columns,
            plan.scenarios,
            cases,
            problems=plan.problems,
            model=plan.model,
            equivalences=self.equivalences,
        )

    def rerun_words(self, case: CaseResult) -> list[str]:
        if self.command:
            return command_rerun_words(self.spec, case.adapter)
        return client_rerun_words(self.spec, case.adapter, python=self.python, intercept=self.intercept)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close) and type(self.client).__name__ == "RemoteClient":
            close()


@dataclass(frozen=True, kw_only=True)
class ServerTarget:
    """A model server at a URL (``conformance certify --server``): ``options`` without the plan's
    choices (``for_plan`` adds them); ``words``: how the command line named it, for rerun commands."""

    options: ServerOptions
    words: tuple[str, ...] = ()
    noun: str = "wires"

    @property
    def label(self) -> str:
        return f"{self.options.name}: "

    @property
    def known(self) -> str:
        return f"{self.options.name} is certified on {', '.join(self.options.wires)}"

    @property
    def columns(self) -> Sequence[Adapter]:
        from conformance.servers.server import server_columns

        return server_columns(self.options)

    def for_plan(self, plan: Plan) -> ServerOptions:
        """The server options with the plan's selection, checks and bounds."""
        from dataclasses import replace

        return replace(
            self.options,
            checks=plan.checks,
            select=plan.select,
            timeout=plan.timeout,
            fail_fast=plan.fail_fast,
            shard=plan.shard,
        )

    def case_count(self, plan: Plan) -> int:
        from conformance.servers.server import server_case_count

        return server_case_count(plan.scenarios, self.for_plan(plan))

    def run(self, plan: Plan, progress: Progress) -> RunResult:
        from conformance.servers.server import certify_server

        return certify_server(plan.scenarios, self.for_plan(plan), progress=progress, problems=plan.problems)

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        from conformance.servers.server import server_result

        return server_result(plan.scenarios, self.for_plan(plan), cases, problems=plan.problems)

    def rerun_words(self, case: CaseResult) -> list[str]:
        return ["certify", *self.words, "--wires", case.adapter.rpartition("/")[2]]

    def close(self) -> None:
        return None


@dataclass(frozen=True, kw_only=True)
class GatewayTarget:
    """A gateway calling the loopback emulator upstream (``conformance certify --gateway``): ``options``
    without the plan's choices; ``words``: how the command line named it, for rerun commands."""

    options: GatewayOptions
    words: tuple[str, ...] = ()
    noun: str = "upstreams"

    @property
    def label(self) -> str:
        return f"{self.options.name}: "

    @property
    def known(self) -> str:
        return f"{self.options.name} is certified towards {', '.join(self.options.upstreams)}"

    @property
    def columns(self) -> Sequence[Adapter]:
        from conformance.clients.harness import client_adapter
        from conformance.servers.gateway import GatewayClient

        client = GatewayClient(self.options)
        return [client_adapter(client, w) for w in client.wires]

    def for_plan(self, plan: Plan) -> GatewayOptions:
        """The gateway options with the plan's selection, checks and bounds."""
        from dataclasses import replace

        from conformance.checks import FAMILIES

        return replace(
            self.options,
            families=tuple(f for f in plan.families if f in FAMILIES),
            checks=plan.checks,
            select=plan.select,
            timeout=plan.timeout,
            fail_fast=plan.fail_fast,
            shard=plan.shard,
        )

    def case_count(self, plan: Plan) -> int:
        from conformance.clients.harness import case_modes, chosen_pairs
        from conformance.servers.gateway import GatewayClient, certify_options

        gateway = self.for_plan(plan)
        options = certify_options(gateway, GatewayClient(gateway))
        return sum(len(case_modes(c, s, options)) for c, s in chosen_pairs(self.columns, plan.scenarios, options))

    def run(self, plan: Plan, progress: Progress) -> RunResult:
        from conformance.servers.gateway import certify_gateway

        return certify_gateway(plan.scenarios, self.for_plan(plan), progress=progress, problems=plan.problems)

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        from conformance.run.runner import run_result

        return run_result(self.columns, plan.scenarios, cases, problems=plan.problems, model=self.options.model)

    def rerun_words(self, case: CaseResult) -> list[str]:
        return ["certify", *self.words, "--upstream", case.adapter.rpartition("/")[2]]

    def close(self) -> None:
        return None


def command_rerun_words(command: str, column: str) -> list[str]:
    """How the rerun command of a case names a driver command (``certify --command``; its column
    ``client/wire``: the wire after the slash)."""
    return ["certify", "--command", command, "--wires", column.rpartition("/")[2]]


def client_rerun_words(spec: str, column: str, *, python: str | None = None, intercept: bool = False) -> list[str]:
    """How the rerun command of a case names the client (its column ``client/wire``: the wire after the slash)."""
    words = ["certify", "--client", spec]
    if python:
        words += ["--python", python]
    if intercept:
        words.append("--intercept")
    return [*words, "--wires", column.rpartition("/")[2]]


def load_command(command: str) -> Any:
    """The client whose driver is the program ``command`` (any language, docs/protocol.md), started and
    checked against the contract (``UsageError`` says what is wrong)."""
    from conformance.clients.remote import RemoteClient

    return RemoteClient.of_command(command)


def load_client(spec: str, python: str | None = None) -> Any:
    """The client ``spec`` names (here, or with ``python`` in that interpreter:
    ``conformance.clients.remote``), checked against the contract (``UsageError`` says what is wrong)."""
    from conformance.clients.contract import client_problems

    if python is not None:
        from conformance.clients.remote import RemoteClient

        return RemoteClient(spec, python)
    from conformance.clients.child import load_object

    try:
        client = load_object(spec)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--client {spec}: {exc} (is it on PYTHONPATH?)") from exc
    except Exception as exc:  # the driver module failed while importing
        raise UsageError(f"--client {spec}: importing it failed: {type(exc).__name__}: {exc}") from exc
    problems = client_problems(client)
    if problems:
        raise UsageError(f"--client {spec}: " + "; ".join(problems) + " (see docs/clients.md)")
    return client


def read_equivalences(files: Sequence[str]) -> EquivalenceTable | None:
    """The suite's table with the rows of ``--equivalences`` files after it (None: the suite's alone);
    ``UsageError`` names the file and row of anything malformed."""
    from conformance.checks.equivalences import bundled_table, merged, read_table

    if not files:
        return None
    return merged([bundled_table(), *(read_table(Path(f)) for f in files)])
