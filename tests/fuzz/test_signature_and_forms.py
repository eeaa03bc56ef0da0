"""Fuzzing what a carrier webhook brings: the form body, the query, the signature
header. ``parse_form`` gives pairs or ``FormError``; ``verify`` answers true or false
for any URL, parameters, credential and signature, never raising."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from core.twilio_signature import (
    FormError,
    compute_signature,
    parse_form,
    url_variants,
    verify,
)
from tests.fuzz.verdicts import read_or_refusal

form_text = st.text(alphabet=string.ascii_letters + string.digits + "=&%+;._-~ \x00é",
                    max_size=80)
urls = st.one_of(
    st.text(max_size=60),
    st.builds(lambda scheme, host, rest: f"{scheme}://{host}{rest}",
              st.sampled_from(["http", "https", "ftp", ""]),
              st.text(alphabet=string.ascii_letters + "[]:@.%0123456789", max_size=20),
              st.text(max_size=20)),
)
latin1 = st.text(alphabet=st.characters(max_codepoint=0xFF), max_size=40)


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=120), form_text.map(str.encode)))
def test_any_body_gives_pairs_or_form_error(body):
    pairs = read_or_refusal(parse_form, body, FormError)
    if not isinstance(pairs, FormError):
        assert all(isinstance(name, str) and isinstance(value, str) for name, value in pairs)


@settings(max_examples=300)
@given(urls, latin1, st.one_of(st.none(), latin1), st.text(max_size=12),
       st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8)), max_size=4))
def test_verify_answers_a_bool_for_anything(url, query, signature, credential, params):
    # The route decodes the query and the header as latin-1, so any byte arrives here.
    full = url + (f"?{query}" if query else "")
    assert verify(credential, full, params, signature) in (True, False)
    assert url in url_variants(url)


@settings(max_examples=100)
@given(urls, st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8)), max_size=4),
       st.text(min_size=1, max_size=12))
def test_a_signature_made_for_a_url_always_verifies(url, params, credential):
    assert verify(credential, url, params, compute_signature(credential, url, params))


def test_a_malformed_url_is_only_itself():
    # Found by the fuzzer: an unclosed IPv6 bracket raised ValueError from urlsplit.
    assert url_variants("https://[::1/voice") == ("https://[::1/voice",)
    assert verify("token", "https://[::1/voice", [], "not-it") is False
