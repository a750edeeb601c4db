"""collector_paused (quality/collector.py) turns the collector off inside, and back as it was."""

from __future__ import annotations

import gc

from quality.collector import collector_paused


def test_the_collector_is_off_inside_and_as_it_was_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # (off before: left off)
    finally:
        gc.enable()


def test_back_on_after_an_error():
    @collector_paused()
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("x")

    try:
        fails()
    except ValueError:
        pass
    assert gc.isenabled()
