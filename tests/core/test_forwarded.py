"""Who the client is behind reverse proxies (``core.forwarded``)."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.forwarded import Origin, header_address, origin, parse_trusted_proxies

PROXY = "10.0.0.2"
TRUSTED = parse_trusted_proxies("10.0.0.0/24, 192.168.1.1 ::1")


def xff(value: str, proto: str | None = None) -> list[tuple[str, str]]:
    headers = [("x-forwarded-for", value)]
    return headers + ([("x-forwarded-proto", proto)] if proto else [])


def test_an_untrusted_peer_is_the_client_whatever_it_claims():
    headers = xff("203.0.113.9", "https") + [("forwarded", "for=198.51.100.1;proto=https")]
    assert origin("198.51.100.77", headers, TRUSTED) == Origin("198.51.100.77", None)


def test_the_hop_left_of_the_trusted_proxy_is_the_client():
    assert origin(PROXY, xff("203.0.113.9", "https"), TRUSTED) == Origin("203.0.113.9", "https")


def test_what_the_client_wrote_itself_is_never_believed():
    # The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended what it saw.
    assert origin(PROXY, xff("1.1.1.1, 203.0.113.9"), TRUSTED).client == "203.0.113.9"


def test_trusted_hops_are_skipped_from_the_right():
    assert origin(PROXY, xff("1.1.1.1, 203.0.113.9, 192.168.1.1, 10.0.0.7"),
                  TRUSTED).client == "203.0.113.9"


def test_a_chain_of_only_trusted_hops_gives_the_leftmost():
    assert origin(PROXY, xff("10.0.0.8, 10.0.0.7"), TRUSTED).client == "10.0.0.8"


def test_rfc_7239_forwarded_with_ports_and_ipv6():
    headers = [("forwarded", 'for=1.1.1.1, for="[2001:db8::17]:4711";proto=https;by=x'),
               ("forwarded", "for=10.0.0.7;proto=http")]
    assert origin(PROXY, headers, TRUSTED) == Origin("2001:db8::17", "https")


def test_forwarded_wins_over_x_forwarded_for():
    headers = xff("203.0.113.9") + [("forwarded", "for=198.51.100.1;proto=https")]
    assert origin(PROXY, headers, TRUSTED) == Origin("198.51.100.1", "https")


def test_an_unnamed_client_leaves_the_nearest_known_address():
    assert origin(PROXY, [("forwarded", "for=unknown;proto=https")], TRUSTED) == Origin(
        PROXY, "https")
    assert origin(PROXY, xff("garbage, 10.0.0.7"), TRUSTED).client == "10.0.0.7"


def test_the_proto_pairs_with_the_chosen_hop_or_is_the_nearest():
    assert origin(PROXY, xff("1.1.1.1, 203.0.113.9", "http, https"),
                  TRUSTED).proto == "https"
    assert origin(PROXY, xff("1.1.1.1, 203.0.113.9", "https"), TRUSTED).proto == "https"
    assert origin(PROXY, xff("203.0.113.9", "gopher"), TRUSTED).proto is None
    assert origin(PROXY, [("x-forwarded-proto", "https")], TRUSTED) == Origin(PROXY, "https")


def test_an_ipv4_mapped_peer_is_judged_by_its_ipv4_address():
    assert origin("::ffff:10.0.0.2", xff("203.0.113.9"), TRUSTED).client == "203.0.113.9"


def test_no_trusted_proxies_believes_nobody():
    assert origin(PROXY, xff("203.0.113.9", "https"),
                  parse_trusted_proxies("")) == Origin(PROXY, None)


@pytest.mark.parametrize("text", ["10.0.0.0/33", "proxy.example.org", "1.2.3"])
def test_a_bad_trusted_entry_is_named(text):
    with pytest.raises(ValueError, match="is not an address"):
        parse_trusted_proxies(f"127.0.0.1, {text}")


addresses = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)
header_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
proxies = st.lists(st.ip_addresses(v=4, network="10.0.0.0/24").map(str), max_size=4)


def _untrusted(address: str) -> bool:
    parsed = ipaddress.ip_address(address)
    return not (parsed.version == 4 and parsed in ipaddress.ip_network("10.0.0.0/24")) \
        and address not in ("192.168.1.1", "::1") and getattr(parsed, "ipv4_mapped", None) is None


@settings(deadline=None)
@given(spoofed=st.lists(addresses, max_size=4), client=addresses.filter(_untrusted),
       hops=proxies)
def test_the_client_is_found_whatever_it_prepended(spoofed, client, hops):
    chain = ", ".join(spoofed + [client] + hops)
    assert origin(PROXY, xff(chain), TRUSTED).client == ipaddress.ip_address(client).compressed


@settings(deadline=None)
@given(peer=addresses, names=st.lists(st.sampled_from(
    ["forwarded", "x-forwarded-for", "x-forwarded-proto", "host"]), max_size=4),
    values=st.lists(header_text, min_size=4, max_size=4))
def test_any_header_text_gives_the_peer_or_an_address_it_names(peer, names, values):
    headers = list(zip(names, values))
    found = origin(peer, headers, TRUSTED)
    assert found.proto in (None, "http", "https")
    named = {header_address(piece) for _, value in headers
             for piece in re.split(r"[,;=]", value)} | {header_address(peer)}
    assert found.client == peer or ipaddress.ip_address(found.client) in named


@settings(deadline=None)
@given(peer=addresses.filter(_untrusted), headers=st.lists(st.tuples(st.sampled_from(
    ["forwarded", "x-forwarded-for", "x-forwarded-proto"]), header_text), max_size=4))
def test_an_untrusted_peer_is_never_replaced(peer, headers):
    assert origin(peer, headers, TRUSTED) == Origin(peer, None)
