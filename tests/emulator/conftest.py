"""Fixtures of the emulator tests: one running emulator per module and an httpx client on it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from conformance.emulator import Emulator


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(port=0) as emu:
        yield emu


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The module's emulator, with the default script again after the test."""
    yield emulator
    emulator.set_script(None)


@pytest.fixture
def client(emulator: Emulator) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.base_url, timeout=10) as http:
        yield http
