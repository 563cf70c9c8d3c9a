"""``python -m conformance``: the same command line as the ``conformance`` script."""

from conformance.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
