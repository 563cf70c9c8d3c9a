"""``python -m conformance``: the same command line as the ``conformance`` script."""

from conformance.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    code = main()
    from conformance.run.workers import exit_despite_threads

    exit_despite_threads(code)  # a thread an adapter module started when imported must not keep the run alive
    raise SystemExit(code)
