"""The carrier signature against the carrier's own validator (``twilio``)."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st
from twilio.request_validator import RequestValidator

from core.twilio_signature import (
    FormError,
    compute_signature,
    parse_form,
    signed_text,
    url_variants,
    verify,
)

TOKEN = "12345"
URL = "https://mycompany.com/myapp.php?foo=1&bar=2"
PARAMS = {"CallSid": "CA1234567890ABCDE", "Caller": "+12349013030", "Digits": "1234",
          "From": "+12349013030", "To": "+18005551212"}

names = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=12)
values = st.text(max_size=30)


def test_a_known_example_gives_its_known_signature():
    expected = "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
    assert RequestValidator(TOKEN).compute_signature(URL, PARAMS) == expected
    assert compute_signature(TOKEN, URL, PARAMS) == expected


@settings(max_examples=200)
@given(st.dictionaries(names, values, max_size=8), st.text(min_size=1, max_size=20))
def test_signatures_equal_the_carriers_validator(params, token):
    expected = RequestValidator(token).compute_signature(URL, params)
    assert compute_signature(token, URL, params) == expected
    assert verify(token, URL, params, expected)


def test_repeated_names_sign_each_distinct_value_in_order():
    pairs = [("b", "2"), ("a", "z"), ("a", "y"), ("a", "y")]
    assert signed_text("u", pairs) == "uayazb2"


def test_one_changed_byte_anywhere_fails():
    good = compute_signature(TOKEN, URL, PARAMS)
    assert not verify(TOKEN, URL, PARAMS, good[:-2] + ("A=" if good[-2] != "A" else "B="))
    assert not verify(TOKEN, URL, {**PARAMS, "Digits": "1235"}, good)
    assert not verify(TOKEN + "6", URL, PARAMS, good)


def test_trailing_slash_and_http_are_other_urls():
    base = "https://calls.example.org/api/telephony/carrier/voice"
    good = compute_signature(TOKEN, base, PARAMS)
    assert verify(TOKEN, base, PARAMS, good)
    assert not verify(TOKEN, base + "/", PARAMS, good)
    assert not verify(TOKEN, base.replace("https", "http"), PARAMS, good)


def test_the_default_port_may_be_added_or_removed():
    assert url_variants("https://h.org/p?q=1") == ("https://h.org/p?q=1",
                                                   "https://h.org:443/p?q=1")
    assert url_variants("https://h.org:443/p") == ("https://h.org:443/p", "https://h.org/p")
    assert url_variants("https://h.org:8443/p") == ("https://h.org:8443/p",)
    signed_with_port = compute_signature(TOKEN, "https://h.org:443/p", PARAMS)
    assert verify(TOKEN, "https://h.org/p", PARAMS, signed_with_port)


def test_no_credential_or_no_signature_never_verifies():
    good = compute_signature(TOKEN, URL, PARAMS)
    assert not verify(None, URL, PARAMS, good)
    assert not verify("", URL, PARAMS, good)
    assert not verify(TOKEN, URL, PARAMS, None)
    assert not verify(TOKEN, URL, PARAMS, "")
    assert not verify(TOKEN, URL, PARAMS, "é" * 28)


def test_form_bodies_parse_in_order_and_garbage_is_a_form_error():
    assert parse_form(b"To=%2B4411&From=&To=x") == [("To", "+4411"), ("From", ""), ("To", "x")]
    assert parse_form(b"") == []
    for garbage in (b"\xff\xfe", b"no-equals-sign", b"a=%ff"):
        try:
            parse_form(garbage)
        except FormError:
            continue
        raise AssertionError(garbage)


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_form_error_only(body):
    try:
        parse_form(body)
    except FormError:
        pass
