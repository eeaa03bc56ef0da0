"""``host:port``: one reader, one set of rules, errors that name the rule broken."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import settings
from core.host_port import HostPort, InvalidHostPort, host_of, parse_host_port, url_host


@pytest.mark.parametrize("text, expected", [
    ("10.0.0.5:9092", ("10.0.0.5", 9092)),
    ("0.0.0.0:4573", ("0.0.0.0", 4573)),
    ("[::1]:4573", ("::1", 4573)),
    ("[::]:1", ("::", 1)),
    ("[fd00::5]:65535", ("fd00::5", 65535)),
    ("[::ffff:10.0.0.5]:9092", ("::ffff:10.0.0.5", 9092)),
    ("localhost:9092", ("localhost", 9092)),
    ("pbx-1.example.org:9092", ("pbx-1.example.org", 9092)),
    ("PBX.Example.ORG:80", ("PBX.Example.ORG", 80)),
])
def test_addresses_that_follow_the_rules(text, expected):
    assert parse_host_port(text) == expected
    assert parse_host_port(text).host == expected[0]


@pytest.mark.parametrize("text, says", [
    ("", "is not host:port"),
    ("9092", "is not host:port"),
    ("nowhere", "is not host:port"),
    (":9092", "the host is missing"),
    ("::1:9092", "IPv6 address goes in brackets, as in [::1]:9092"),
    ("fd00::5:9092", "in brackets"),
    ("[::1]", "is not host:port"),
    ("[::1]9092", "is not host:port"),
    ("[::1:9092", "is not host:port"),
    ("[10.0.0.5]:9092", "is not an IPv6 address"),
    ("[nowhere]:9092", "is not an IPv6 address"),
    ("host:", "port must be a number from 1 to 65535"),
    ("host:0", "from 1 to 65535"),
    ("host:65536", "from 1 to 65535"),
    ("host:70000", "from 1 to 65535"),
    ("host:port", "from 1 to 65535"),
    ("host:+80", "from 1 to 65535"),
    ("host:-1", "from 1 to 65535"),
    ("host: 80", "from 1 to 65535"),
    ("host:٨٠", "from 1 to 65535"),  # Arabic-Indic digits are digits, not a port
    ("host:" + "9" * 5000, "from 1 to 65535"),
    ("10.0.0.256:9092", "is not an IPv4 address"),
    ("10.0.0.05:9092", "is not an IPv4 address"),
    ("10.0.0:9092", "is not an IPv4 address"),
    ("under_score:9092", "is not an IP address or a host name"),
    ("-pbx.example.org:9092", "is not an IP address or a host name"),
    ("pbx-.example.org:9092", "is not an IP address or a host name"),
    ("pbx..example.org:9092", "is not an IP address or a host name"),
    ("pbx.example.org.:9092", "is not an IP address or a host name"),
    ("pbx.exämple.org:9092", "is not an IP address or a host name"),
    (" 10.0.0.5:9092", "is not an IPv4 address"),
    ("pbx example:9092", "is not an IP address or a host name"),
    ("tcp://pbx:9092", "in brackets"),
    ("a" * 64 + ".org:9092", "is not an IP address or a host name"),
    (".".join(["a" * 63] * 4) + ":9092", "is not an IP address or a host name"),
])
def test_addresses_that_break_a_rule_say_which(text, says):
    with pytest.raises(InvalidHostPort, match=says.replace("[", r"\[").replace("]", r"\]")):
        parse_host_port(text)


def test_the_error_is_a_value_error():
    assert issubclass(InvalidHostPort, ValueError)


@pytest.mark.parametrize("value, host", [
    ("example.org", "example.org"), ("example.org:8080", "example.org"),
    ("[::1]:80", "::1"), ("[::1]", "::1"), ("::1", "::1"), (" 10.0.0.5:80 ", "10.0.0.5"),
])
def test_the_host_of_a_host_header_value(value, host):
    assert host_of(value) == host


# -- properties -----------------------------------------------------------------------

_ports = st.integers(1, 65535)
_labels = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
_names = st.lists(_labels, min_size=1, max_size=4).map(".".join).filter(
    lambda name: not name.split(".")[-1].isdigit())
_hosts = st.one_of(st.ip_addresses(v=4).map(str), st.ip_addresses(v=6).map(str), _names)


@given(_hosts, _ports)
def test_every_address_written_out_reads_back_as_itself(host, port):
    address = HostPort(host, port)
    assert parse_host_port(str(address)) == address


@given(st.text(max_size=40))
def test_any_text_is_an_address_or_an_invalid_host_port(text):
    try:
        host, port = parse_host_port(text)
    except InvalidHostPort:
        return
    assert 1 <= port <= 65535
    if ":" in host:
        ipaddress.IPv6Address(host)


@given(_hosts, st.integers(min_value=-10, max_value=10**6).filter(lambda p: not 1 <= p <= 65535))
def test_a_port_out_of_range_is_refused_whatever_the_host(host, port):
    with pytest.raises(InvalidHostPort, match="from 1 to 65535"):
        parse_host_port(f"{HostPort(host, 1)}"[:-1] + str(port))


@pytest.mark.parametrize("value, says", [
    ("::1:9092", "in brackets"), ("nowhere", "is not host:port"), (":9092", "host is missing"),
    ("10.0.0.5:0", "from 1 to 65535"),
])
def test_the_listen_address_setting_reads_by_the_same_rules(value, says):
    setting = settings.get("telephony.pbx_listen")
    with pytest.raises(settings.SettingError, match=says):
        settings.check_runtime_value(setting, value)
    assert settings.check_runtime_value(setting, "[::1]:9092") == "[::1]:9092"


def test_a_urls_host_never_carries_its_user_and_password():
    assert url_host("https://example.org/v1") == "example.org"
    assert url_host("http://u:pw@127.0.0.1:8000/v1") == "127.0.0.1:8000"
    assert url_host("http://user@[fd00::5]:9/") == "[fd00::5]:9"
    assert url_host("local") == ""  # not a URL: no host
