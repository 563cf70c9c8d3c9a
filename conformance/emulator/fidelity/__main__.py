"""``python -m conformance.emulator.fidelity``: print the emulator's differences from real traffic."""

from __future__ import annotations

import sys

from conformance.emulator.fidelity import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
