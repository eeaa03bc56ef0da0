"""Headers given to a JSON response: each once, in the order given, as bytes."""

from app.http.errors import encoded_json_response, header_pairs


def test_a_response_carries_the_given_headers_in_order():
    given = {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59",
             "x-ratelimit-reset-requests": "1s"}
    response = encoded_json_response(200, b'{"ok":true}', given)
    assert [(name, value) for name, value in response.headers
            if name.startswith(b"x-ratelimit")] == [
        (b"x-ratelimit-limit-requests", b"60"), (b"x-ratelimit-remaining-requests", b"59"),
        (b"x-ratelimit-reset-requests", b"1s")]
    assert response.get_first_header(b"X-RateLimit-Limit-Requests") == b"60"
    assert response.content.type == b"application/json" and response.content.body == b'{"ok":true}'


def test_no_headers_given_means_none_added():
    assert header_pairs(None) is None and header_pairs({}) is None
    assert not any(name.startswith(b"x-") for name, _ in encoded_json_response(204, b"").headers)
