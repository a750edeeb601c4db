"""sources/exact_json.py reads and writes JSON exactly as the json module does."""

from __future__ import annotations

import json
import random
import struct

import pytest

from sources import exact_json

# Each: a document json reads (the value must be json's), or one json refuses (the same error).
DOCUMENTS = [
    b"18446744073709551616", b"-9223372036854775809", b"[1180591620717411303424, 2.5]",
    b"123456789012345678901234567890", b"18446744073709551615", b"-0", b"-0.0", b"1E+2",
    b"1e400", b"-1e400", b"1e-400", b"NaN", b"[Infinity, -Infinity]",
    b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'{"\\u0000": 1}',
    b'{"a": 1, "b": 2, "a": 3}', b" {} \n", b"[]", b"true", b"null", b'"\x7f"',
    b'"a\nb"', b'"\x00"', b"01", b"1.", b".5", b"+1", b"-", b"1e", b"[1,]", b'{"a":1,}',
    b'"\\x"', b"nul", b"{}\x0c", b"\xef\xbb\xbf{}", b'"\xff"', b'"\xed\xa0\x80"',
    b'"\xc0\x80"', b'"\xf4\x90\x80\x80"', b'"ab\xe2\x82"', b"", b"{} {}",
]


def json_result(document: bytes) -> tuple[str, object]:
    try:
        return "value", json.loads(document.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return type(error).__name__, str(error)


def exact_result(document: bytes | str) -> tuple[str, object]:
    try:
        return "value", exact_json.loads(document)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return type(error).__name__, str(error)


def same(left: object, right: object) -> bool:
    """Equal values of equal types all the way down (2**70 is no 1.18e21, 1 no 1.0)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    return repr(left) == repr(right)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_value_or_the_error_is_json_s(document: bytes) -> None:
    expected, got = json_result(document), exact_result(document)
    assert got[0] == expected[0]
    assert same(got[1], expected[1])
    try:
        text = document.decode("utf-8")
    except UnicodeDecodeError:
        return
    got_from_text = exact_result(text)
    assert got_from_text[0] == expected[0] and same(got_from_text[1], expected[1])


def test_integers_beyond_64_bits_stay_exact_ints() -> None:
    value = exact_json.loads(b'{"big": 1180591620717411303424, "neg": -18446744073709551617}')
    assert value == {"big": 2**70, "neg": -(2**64) - 1}
    assert type(value["big"]) is int and type(value["neg"]) is int


def test_a_lone_surrogate_in_a_str_goes_to_json() -> None:
    assert exact_json.loads('["a\ud800"]') == json.loads('["a\ud800"]')


def test_floats_are_rounded_as_float_rounds_them() -> None:
    draw = random.Random(17)
    for _ in range(20_000):
        value = struct.unpack("d", draw.getrandbits(64).to_bytes(8, "little"))[0]
        if value != value or value in (float("inf"), float("-inf")):
            continue
        for text in (repr(value), f"{value:.25e}", f"{value:.17g}"):
            assert same(exact_json.loads(text.encode()), json.loads(text))
    for _ in range(20_000):  # long mantissas, exponents to the ends of the range
        digits = "".join(draw.choice("0123456789") for _ in range(draw.randint(1, 40)))
        text = f"{digits.lstrip('0') or '0'}.{digits}e{draw.randint(-340, 310)}"
        assert same(exact_json.loads(text.encode()), json.loads(text))


def test_invalid_utf8_is_refused_as_python_refuses_it() -> None:
    draw = random.Random(5)
    for _ in range(20_000):
        size = draw.randint(1, 4)
        sequence = bytes([draw.randint(0x80, 0xFF)]
                         + [draw.randint(0x70, 0xC0) for _ in range(size - 1)])
        for document in (b'"a' + sequence + b'b"', b'{"' + sequence + b'": 1}'):
            expected, got = json_result(document), exact_result(document)
            assert got[0] == expected[0] and same(got[1], expected[1])


def test_text_is_encoded_as_json_dumps_writes_it() -> None:
    draw = random.Random(3)
    alphabet = [chr(code) for code in range(0x100)] + [
        "\u2028", "\u2029", "\ufeff", "\uffff", "\U0001f600", "中"]
    for _ in range(20_000):
        text = "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 30)))
        assert exact_json.encode_text(text) == json.dumps(text, ensure_ascii=False).encode()
    assert exact_json.encode_text(None) == b"null"
    with pytest.raises(UnicodeEncodeError):
        exact_json.encode_text("a\ud800")
