"""The egress gate over every class of address, the URL rules and the allow list
(spec: telephony.md "Outward notifications": every attempt passes the egress gate)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.egress import EgressDecision, EgressReason, check_egress, classify_address, display_host

R = EgressReason
URL = "https://hooks.example.com/notify"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("0.0.0.0", R.UNSPECIFIED),
        ("0.1.2.3", R.UNSPECIFIED),
        ("::", R.UNSPECIFIED),
        ("127.0.0.1", R.LOOPBACK),
        ("127.255.255.254", R.LOOPBACK),
        ("::1", R.LOOPBACK),
        ("10.0.0.1", R.PRIVATE),
        ("172.16.0.1", R.PRIVATE),
        ("172.31.255.255", R.PRIVATE),
        ("192.168.1.1", R.PRIVATE),
        ("fc00::1", R.PRIVATE),
        ("fd12:3456:789a::1", R.PRIVATE),
        ("fec0::1", R.PRIVATE),
        ("64:ff9b:1::a", R.PRIVATE),
        ("169.254.0.1", R.LINK_LOCAL),
        ("169.254.169.253", R.LINK_LOCAL),
        ("fe80::1", R.LINK_LOCAL),
        ("fe80::1%eth0", R.LINK_LOCAL),
        ("febf::1", R.LINK_LOCAL),
        ("169.254.169.254", R.METADATA),
        ("169.254.170.2", R.METADATA),
        ("100.100.100.200", R.METADATA),
        ("fd00:ec2::254", R.METADATA),
        ("100.64.0.1", R.SHARED),
        ("100.127.255.254", R.SHARED),
        ("224.0.0.1", R.MULTICAST),
        ("239.255.255.250", R.MULTICAST),
        ("ff02::1", R.MULTICAST),
        ("ff0e::1", R.MULTICAST),
        ("240.0.0.1", R.RESERVED),
        ("255.255.255.255", R.RESERVED),
        ("192.0.2.1", R.NOT_PUBLIC),  # documentation
        ("198.51.100.7", R.NOT_PUBLIC),
        ("203.0.113.200", R.NOT_PUBLIC),
        ("198.18.0.1", R.NOT_PUBLIC),  # benchmarking
        ("192.0.0.8", R.NOT_PUBLIC),  # protocol assignments
        ("2001:db8::1", R.NOT_PUBLIC),  # documentation
        # IPv4 inside IPv6: judged by the IPv4 address.
        ("::ffff:127.0.0.1", R.LOOPBACK),
        ("::ffff:10.1.2.3", R.PRIVATE),
        ("::ffff:169.254.169.254", R.METADATA),
        ("::ffff:0.0.0.0", R.UNSPECIFIED),
        ("::ffff:224.0.0.1", R.MULTICAST),
        ("64:ff9b::127.0.0.1", R.LOOPBACK),
        ("64:ff9b::a9fe:a9fe", R.METADATA),
        ("2002:c0a8:0101::1", R.PRIVATE),
        ("2002:7f00:1::", R.LOOPBACK),
        # IPv4-compatible (deprecated), and the rest of the reserved ::/8 and beyond
        # 2000::/3, which Python calls global.
        ("::127.0.0.1", R.LOOPBACK),
        ("::7f00:1", R.LOOPBACK),
        ("::169.254.169.254", R.METADATA),
        ("::8.8.8.8", R.NOT_PUBLIC),
        ("0:0:0:1::1", R.NOT_PUBLIC),
        ("400::1", R.NOT_PUBLIC),
    ],
)
def test_every_class_of_address_is_refused_with_its_reason(address, reason):
    assert classify_address(ipaddress.ip_address(address)) is reason
    decision = check_egress(URL, [address])
    assert decision == EgressDecision(False, "hooks.example.com", reason, decision.detail)
    assert decision.detail and "hooks.example.com" in decision.detail


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "1.1.1.1",
        "172.32.0.1",  # just past 172.16/12
        "100.128.0.1",  # just past 100.64/10
        "169.255.0.1",  # just past link-local
        "2606:4700:4700::1111",
        "2a00:1450:4009:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ],
)
def test_public_addresses_pass(address):
    assert classify_address(ipaddress.ip_address(address)) is None
    assert check_egress(URL, [address]) == EgressDecision(True, "hooks.example.com")


def test_every_resolved_address_must_pass():
    decision = check_egress(URL, ["93.184.216.34", "10.0.0.7", "8.8.8.8"])
    assert (decision.allowed, decision.reason) == (False, R.PRIVATE)
    assert "10.0.0.7" in decision.detail


def test_addresses_may_be_given_parsed():
    assert check_egress(URL, [ipaddress.ip_address("8.8.8.8")]).allowed
    assert not check_egress(URL, [ipaddress.ip_address("127.0.0.1")]).allowed


def test_a_host_that_resolved_to_nothing_is_refused():
    assert check_egress(URL, []).reason is R.UNRESOLVED


@pytest.mark.parametrize("nonsense", ["", "localhost", "999.1.1.1", "8.8.8.8:443", None, 42])
def test_a_resolved_value_that_is_not_an_address_is_refused(nonsense):
    assert check_egress(URL, [nonsense]).reason is R.BAD_ADDRESS


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "ws://example.com/",
        "example.com/path",
    ],
)
def test_only_http_and_https_are_allowed(url):
    decision = check_egress(url, ["8.8.8.8"])
    assert (decision.allowed, decision.reason) == (False, R.SCHEME)
    assert "http" in decision.detail


@pytest.mark.parametrize("url", ["HTTP://Example.COM./x", "https://example.com:8443/x?q=1"])
def test_scheme_and_host_are_case_insensitive_and_a_final_dot_is_dropped(url):
    decision = check_egress(url, ["8.8.8.8"])
    assert decision.allowed and decision.host == "example.com"


@pytest.mark.parametrize(
    "url",
    [
        "http://",
        "https:///path",
        "http://:80/",
        "http://example.com:99999/",
        "http://example.com:port/",
    ],
)
def test_a_url_without_a_usable_host_or_port_is_refused(url):
    assert check_egress(url, ["8.8.8.8"]).reason is R.BAD_URL


#: Hosts judged by what they are, before and whatever they resolve to: IP literals by
#: their own address, and the names of loopback and of the cloud metadata services.
HOSTS_REFUSED_AS_WRITTEN = {
    R.LOOPBACK: ["127.0.0.1", "[::1]:8080", "localhost", "api.localhost"],
    R.METADATA: [
        "[::ffff:169.254.169.254]", "169.254.169.254", "metadata.google.internal",
        "METADATA.GOOGLE.INTERNAL.", "metadata.goog", "metadata", "instance-data.ec2.internal",
    ],
    R.PRIVATE: ["10.0.0.1"],
}


@pytest.mark.parametrize(
    ("host", "reason"),
    [(host, reason) for reason, hosts in HOSTS_REFUSED_AS_WRITTEN.items() for host in hosts],
)
def test_a_literal_or_a_known_name_is_refused_whatever_is_resolved(host, reason):
    url = f"http://{host}/computeMetadata/v1/"
    for resolved in (["8.8.8.8"], []):
        decision = check_egress(url, resolved)
        assert (decision.allowed, decision.reason) == (False, reason)


def test_a_public_ip_literal_passes():
    assert check_egress("https://8.8.8.8/dns", []).allowed


def test_user_info_does_not_hide_the_host():
    decision = check_egress("http://hooks.example.com@127.0.0.1/", ["8.8.8.8"])
    assert decision.reason is R.LOOPBACK and decision.host == "127.0.0.1"


def test_the_allow_list_lets_a_named_host_through_whatever_it_resolves_to():
    allow = ["Intranet.Example.", "[fd00::5]", "10.0.0.8"]
    assert check_egress("https://intranet.example/hook", ["10.1.1.1"], allow).allowed
    assert check_egress("http://[fd00::5]/hook", [], allow).allowed
    assert check_egress("http://10.0.0.8/hook", [], allow).allowed
    # Only the hosts listed: a neighbour stays refused.
    assert not check_egress("http://10.0.0.9/hook", [], allow).allowed
    assert not check_egress("https://other.example/hook", ["10.1.1.1"], allow).allowed


def test_the_allow_list_does_not_allow_another_scheme():
    assert check_egress("ftp://intranet.example/", ["10.1.1.1"], ["intranet.example"]).reason is (
        R.SCHEME
    )


@given(st.ip_addresses())
def test_every_address_is_classified_without_error(address):
    reason = classify_address(address)
    if reason is None and address.version == 4:
        assert address.is_global
    if address.is_loopback or address.is_link_local or address.is_multicast:
        assert reason is not None
    assert check_egress(URL, [str(address)]).allowed is (reason is None)


@given(st.text())
def test_any_url_gets_a_decision(url):
    decision = check_egress(url, ["8.8.8.8"])
    assert decision.allowed or (decision.reason in EgressReason and decision.detail)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://hooks.slack.example/services/T000/B000/XXXX", "hooks.slack.example"),
        ("https://user:secret@Example.com:8443/x", "example.com"),
        ("not a url", None),
        ("http://[::1", None),
    ],
)
def test_a_saved_target_shows_only_its_host(url, host):
    assert display_host(url) == host


def test_the_allow_list_setting_parses_names_and_addresses():
    from core.egress import parse_allow_hosts
    from core.settings import SettingError, check_runtime_value, get

    assert parse_allow_hosts("Hooks.Internal., 10.0.0.5 [::1],127.0.0.1 10.0.0.5") == (
        "hooks.internal", "10.0.0.5", "::1", "127.0.0.1")
    assert parse_allow_hosts("") == () and parse_allow_hosts(None) == ()
    for bad in ("http://hooks.internal", "hooks internal/x", "a..b", "-a.b"):
        with pytest.raises(SettingError):
            check_runtime_value(get("egress.allow_hosts"), bad)


@pytest.mark.parametrize("url, host", [
    ("http://１２７.０.０.１:8080/x", "127.0.0.1"),  # fullwidth digits and stops
    ("http://127。0。0。1/x", "127.0.0.1"),  # ideographic full stops
    ("http://127｡0｡0｡1/x", "127.0.0.1"),  # halfwidth ones
    ("http://ＬＯＣＡＬＨＯＳＴ/x", "localhost"),
    ("http://2130706433/x", "2130706433"),  # one decimal number
    ("http://0177.0.0.1/x", "0177.0.0.1"),  # octal
    ("http://0x7f.1/x", "0x7f.1"),  # hex, two parts
    ("http://127.1/x", "127.1"),
    ("http://0x7f000001/x", "0x7f000001"),
])
def test_hosts_are_read_as_the_client_reads_them(url, host):
    decision = check_egress(url, ["93.184.216.34"])  # the resolver is never the judge here
    assert (decision.allowed, decision.host, decision.reason) == (
        False, host, EgressReason.LOOPBACK)


@pytest.mark.parametrize("host", ["134744072", "8.8.2056", "0x08080808"])
def test_numbers_naming_a_public_address_pass(host):
    assert check_egress(f"http://{host}/", []).allowed


def test_a_name_that_only_looks_numeric_is_still_a_name():
    # 256 in the last of four parts, or a letter, is no inet_aton form: resolved as usual
    assert check_egress("http://1.2.3.256/", ["93.184.216.34"]).allowed
    assert check_egress("http://0x7g.1/", ["93.184.216.34"]).allowed
