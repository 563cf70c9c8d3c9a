"""The HTTP traffic edge: every byte that crosses the network or a cassette file passes here.

- ``transport``: send a ``WireRequest`` with httpx (to a provider or the emulator) and keep the
  exchange log the checks read;
- ``replay``: serve a cassette back to a ``Transport`` without opening a socket;
- ``recorder``: write one scrubbed, readable cassette, atomically, verified by replaying it;
- ``cassettes``: read recorded traffic (our JSON cassettes and the vcrpy dialects) into frozen
  values; ``safe_yaml`` is the one YAML loader for untrusted cassette files;
- ``scrub``: remove secrets from headers, queries and bodies (pure); ``atomic``: replace a file so
  that a writer killed at any moment leaves the old one intact;
- ``network_guard``: no socket beyond loopback while the test suite runs;
- ``inspect``: recorded traffic decoded with the reference adapters, as text or JSON
  (``conformance inspect``).

Adapters never import this package: translation stays pure.
"""

from __future__ import annotations

__all__: list[str] = []
