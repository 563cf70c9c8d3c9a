"""conformance: a conformance test suite and recorder for LLM tool-calling adapters."""

__all__ = ["__version__"]

__version__ = "0.1.0"
