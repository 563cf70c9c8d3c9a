"""A stand-in for a third-party framework's package: it lives outside ``conformance`` and is put on
``sys.path`` only by the tests that certify its adapter (``tests/cli/test_third_party_adapter.py``)."""
