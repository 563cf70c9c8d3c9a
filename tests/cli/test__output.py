"""``conformance.cli._output``: a stream that goes quiet when its reader goes away."""

from __future__ import annotations

import io

from conformance.cli._output import QuietOnBrokenPipe


def test_quiet_on_broken_pipe_drops_the_rest_and_keeps_going() -> None:
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    stream = QuietOnBrokenPipe(Gone())
    assert stream.write("abc") == 3 and stream.gone
    print("more", file=stream)
    stream.flush()
    assert QuietOnBrokenPipe.around(stream) is stream


def test_a_stream_whose_reader_stays_gets_everything() -> None:
    target = io.StringIO()
    stream = QuietOnBrokenPipe(target)
    print("one", file=stream)
    stream.write("two")
    stream.flush()
    assert target.getvalue() == "one\ntwo" and not stream.gone
