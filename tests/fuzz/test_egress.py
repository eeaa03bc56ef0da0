"""Fuzzing the egress gate: any URL text and any resolved addresses give a decision,
and a decision to send never names a loopback, private, link-local or metadata
address unless the host is on the allow list."""

from __future__ import annotations

import ipaddress
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from core.egress import EgressDecision, check_egress, classify_address, display_host

hosts = st.one_of(
    st.ip_addresses().map(lambda a: f"[{a}]" if a.version == 6 else str(a)),
    st.sampled_from(["localhost", "metadata.google.internal", "example.org", "a.localhost.",
                     "169.254.169.254", "[::ffff:127.0.0.1]", "0x7f.1", "[fe80::1%25eth0]"]),
    st.text(alphabet=string.ascii_letters + string.digits + ".-[]:%@", max_size=20),
)
urls = st.one_of(
    st.text(max_size=50),
    st.builds(lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
              st.sampled_from(["http", "https", "HTTP", "file", "gopher", ""]), hosts,
              st.sampled_from(["", ":80", ":0", ":99999", ":x"]), st.text(max_size=10)),
)
addresses = st.lists(st.one_of(st.ip_addresses(), st.ip_addresses().map(str),
                               st.text(max_size=15)), max_size=3)


@settings(max_examples=400)
@given(urls, addresses)
def test_any_url_and_addresses_give_a_decision(url, resolved):
    decision = check_egress(url, resolved)
    assert isinstance(decision, EgressDecision)
    if decision.allowed:
        # An IP literal is judged by itself; a name by every address it resolved to.
        literal = _literal(decision.host)
        judged = [literal] if literal is not None else [_literal(str(a)) for a in resolved]
        assert judged and all(a is not None and classify_address(a) is None for a in judged)
    display_host(url)


def _literal(host: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host or "")
    except ValueError:
        return None
