"""E.164 normalisation (spec: telephony.md "Line", field e164) and the private-source
check of the pbx questions (spec: telephony.md "Authentication")."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.phone_numbers import InvalidPhoneNumber, is_private_source, normalise_e164


@pytest.mark.parametrize(
    ("given_number", "expected"),
    [
        ("+442079460958", "+442079460958"),
        ("+44 20 7946 0958", "+442079460958"),
        ("+1 (415) 555-2671", "+14155552671"),
        ("+49.30.1234567", "+49301234567"),
        ("0044 20 7946 0958", "+442079460958"),
        ("00 1-415-555-2671", "+14155552671"),
        ("+44\u00a020\t7946\u00a00958", "+442079460958"),
        ("+1234567", "+1234567"),
        ("+123456789012345", "+123456789012345"),
    ],
)
def test_separators_are_stripped_and_00_becomes_plus(given_number, expected):
    assert normalise_e164(given_number) == expected


@pytest.mark.parametrize(
    ("given_number", "reason"),
    [
        ("", "start with + or 00"),
        ("442079460958", "start with + or 00"),
        ("0207 946 0958", "start with + or 00"),
        ("+", "7 to 15 digits, not 0"),
        ("+123456", "7 to 15 digits, not 6"),
        ("+1234567890123456", "7 to 15 digits, not 16"),
        ("+0442079460958", "cannot start with 0"),
        ("000442079460958", "cannot start with 0"),
        ("+44 20 7946 095x", "only digits"),
        ("+44/20/7946/0958", "only digits"),
        ("+\u0664\u0664\u0662\u0660\u0667\u0669\u0664\u0666", "only digits"),
        ("++442079460958", "only digits"),
    ],
)
def test_anything_else_is_refused_with_a_reason(given_number, reason):
    with pytest.raises(InvalidPhoneNumber, match=re.escape(reason)) as caught:
        normalise_e164(given_number)
    assert isinstance(caught.value, ValueError)
    assert caught.value.value == given_number


@given(st.text(max_size=30))
def test_any_text_is_a_number_or_invalid_phone_number(text):
    try:
        number = normalise_e164(text)
    except InvalidPhoneNumber:
        return
    assert number.startswith("+") and number[1] != "0"
    assert number[1:].isascii() and number[1:].isdigit() and 7 <= len(number) - 1 <= 15
    assert normalise_e164(number) == number  # normal form is stable


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.255.0.9",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.20",
        "::1",
        "fc00::1",
        "fd12:3456:789a::1",
        "::ffff:10.0.0.7",
        "::ffff:127.0.0.1",
        "::ffff:192.168.0.1",
        ipaddress.ip_address("10.0.0.1"),
    ],
)
def test_loopback_rfc1918_and_unique_local_addresses_are_private(address):
    assert is_private_source(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "172.32.0.1",
        "172.15.255.255",
        "192.169.0.1",
        "169.254.1.1",
        "100.64.0.1",
        "192.0.2.1",
        "0.0.0.0",
        "fe80::1",
        "fe80::1%eth0",
        "2001:db8::1",
        "fe00::1",
        "::ffff:8.8.8.8",
        "2002:a00:1::1",
        "",
        "localhost",
        "10.0.0.1:5060",
        "/run/svc.sock",
        None,
    ],
)
def test_public_link_local_and_non_addresses_are_not_private(address):
    assert not is_private_source(address)


@given(st.one_of(st.text(max_size=40), st.ip_addresses().map(str)))
def test_private_source_check_never_raises(address):
    assert is_private_source(address) in (True, False)


@pytest.mark.parametrize("given", ["441632960002", "01632960002", "01632 960002",
                                   "00441632960002", "+44 1632 960002", "(01632) 960-002"])
def test_a_region_reads_national_and_international_forms_alike(given):
    assert normalise_e164(given, "GB") == "+441632960002"


def test_each_region_dials_its_own_way():
    assert normalise_e164("202 555 0123", "US") == "+12025550123"
    assert normalise_e164("011 44 1632 960002", "US") == "+441632960002"
    assert normalise_e164("0044 1632 960002", "US") == "+441632960002"  # 00 is always +


@pytest.mark.parametrize("given", ["1234", "anonymous", "0800-FLOWERS", "016329600021234567"])
def test_a_region_still_refuses_what_is_no_number_there(given):
    with pytest.raises(InvalidPhoneNumber):
        normalise_e164(given, "GB")


def test_without_a_region_the_refusal_names_the_setting():
    with pytest.raises(InvalidPhoneNumber, match="telephony.default_region"):
        normalise_e164("01632960002")
