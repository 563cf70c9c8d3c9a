"""Count the (wire, split offset, secret kind) combinations whose recorded cassette leaks the secret.

Every combination of ``tests/_secrets.py`` (six stream framings, eight secret kinds, every split
offset of the streamed body, one body cut into one-character chunks, one body that is not UTF-8) is
written with ``conformance.traffic.recorder.write_cassette``, read back, and searched for the
secret or any 8 characters of it (as is or percent-decoded). Prints the counts by wire and kind,
then, with ``--timing``, the seconds to scrub a 10 MB stream of 4 KB chunks chunk by chunk (the
old way) and joined (``Scrubber.pieces``) in the same process. Run it against another checkout to
compare: ``PYTHONPATH=/path/to/checkout python scripts/secret_leaks.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _secrets import CHANNELS, SECRETS, WIRES, Secret, Wire, exchanges, leaks, written

from conformance.traffic.recorder import Provenance, write_cassette
from conformance.traffic.scrub import Scrubber

Combination = tuple[str, str, str, str]
"""(wire, label, secret kind, channel): the label is ``offset N`` or the name of a special body."""


def leaking(
    directory: Path, wires: Sequence[Wire] = WIRES, secrets: Sequence[Secret] = SECRETS
) -> tuple[int, list[Combination]]:
    """How many (wire, label, kind) combinations were recorded, and each channel of one that leaks
    (``body, cut inside the secret`` for a body split between two of the secret's characters)."""
    total = 0
    found: list[Combination] = []
    for wire in wires:
        for secret in secrets:
            made = list(exchanges(wire, secret))
            body = made[0][1].response_body
            start = body.index(secret.value.encode())
            inside = {f"offset {o}" for o in range(start + 1, start + len(secret.value))}
            groups = {
                "text": [m for m in made if m[0] != "not UTF-8"],
                "binary": [m for m in made if m[0] == "not UTF-8"],
            }
            for part, group in groups.items():
                path = directory / f"{wire.name}-{secret.kind}-{part}.yaml"
                adapter = "gemini" if wire.name == "gemini_array" else wire.name
                write_cassette(
                    path,
                    [e for _, e in group],
                    adapter=adapter,
                    base_url="http://127.0.0.1:8080",
                    provenance=Provenance(mode="live"),
                )
                text, views = written(path)
                total += len(group)
                for (label, _), view in zip(group, views, strict=True):
                    where = "body, cut inside the secret" if label in inside else "body"
                    found += [
                        (wire.name, label, secret.kind, where if c == "body" else c)
                        for c in CHANNELS
                        if leaks(view[c], secret.value)
                    ]
                if leaks(text, secret.value) and not any(f[:3] == (wire.name, group[0][0], secret.kind) for f in found):
                    found.append((wire.name, f"{part} file", secret.kind, "file"))
    return total, found


def timing(scrubber_class: type[Scrubber], megabytes: int = 10) -> tuple[float, float, float]:
    """Seconds to scrub a ``megabytes`` MB SSE stream (4 KB chunks): chunk by chunk, joined, and
    joined at twice the size (linearity)."""
    event = b'data: {"choices":[{"delta":{"content":"plain words and numbers 0123456789"}}]}\n\n'

    def stream(size: int) -> list[str]:
        body = (event * (size // len(event) + 1))[:size].decode()
        return [body[i : i + 4096] for i in range(0, len(body), 4096)]

    scrubber = scrubber_class(["sk-proj-named-secret-0123456789", "Zq8w-Xk3vT9pRb7mLc2nYh5sJd1fG4"])
    chunks = stream(megabytes * 1_000_000)
    start = time.perf_counter()
    for chunk in chunks:
        scrubber.text(chunk)
    separate = time.perf_counter() - start
    joined = _joined_seconds(scrubber, chunks)
    double = _joined_seconds(scrubber, stream(2 * megabytes * 1_000_000))
    return separate, joined, double


def _joined_seconds(scrubber: Scrubber, chunks: list[str]) -> float:
    pieces = getattr(scrubber, "pieces", None)
    if pieces is None:  # a checkout from before Scrubber.pieces
        return float("nan")
    start = time.perf_counter()
    pieces(chunks)
    return time.perf_counter() - start


def _old_scrubber(checkout: Path) -> type[Scrubber]:
    """The ``Scrubber`` class of another checkout's ``conformance/traffic/scrub.py``, loaded beside ours."""
    spec = importlib.util.spec_from_file_location("_old_scrub", checkout / "conformance/traffic/scrub.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Scrubber  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing", action="store_true", help="also time scrubbing a 10 MB stream")
    parser.add_argument("--old", type=Path, help="a checkout whose scrub.py is timed chunk by chunk beside this one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        total, found = leaking(Path(directory))
    combos = {f[:3] for f in found}
    print(f"{len(combos)} of {total} (wire, offset, secret kind) combinations leak")
    for channel in ("url", "headers", "body, cut inside the secret", "body", "file"):
        print(f"  through the {channel}: {len({f[:3] for f in found if f[3] == channel})}")
    split = Counter((w, k) for w, _, k, c in found if c == "body, cut inside the secret")
    for (wire, kind), n in sorted(split.items()):
        print(f"  body, cut inside the secret: {wire:17} {kind:12} {n}")
    other = Counter(
        (f[1] if not f[1].startswith("offset") else "an offset outside", f[2]) for f in found if f[3] == "body"
    )
    for (label, kind), n in sorted(other.items()):
        print(f"  body, {label}: {kind} {n}")
    if args.timing:
        separate, joined, double = timing(Scrubber)
        print(
            f"10 MB stream, this checkout: chunk by chunk {separate:.2f} s, joined {joined:.2f} s; "
            f"20 MB joined {double:.2f} s"
        )
        if args.old:
            old, _, _ = timing(_old_scrubber(args.old))
            print(f"10 MB stream, {args.old}: chunk by chunk {old:.2f} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
