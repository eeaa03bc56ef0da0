"""Refusals are plain exceptions; only app.http turns them into responses.

A service raises a kind from ``app.errors`` (no web framework in sight); the mapping in
``app.http.errors`` gives each kind its status and headers and renders the same JSON
shape as before, ours under ``/api`` and OpenAI's under ``/v1``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from blacksheep import Request

from app import errors
from app.http.errors import HttpRefusal, error_response, status_of
from app.public_api.agent_calls import ChatNotFound
from app.public_api.auth import InvalidApiKey, RateLimited
from app.services.agents import AgentUnavailable
from app.services.providers import ModelNotFound


def test_the_errors_and_the_credential_box_load_without_the_web_framework():
    probe = ("import sys, app.errors, app.crypto; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'blacksheep' "
             "or m.startswith('app.http')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize(("error", "status"), [
    (errors.ApiError("x"), 400),
    (errors.BadRequest("x"), 400),
    (errors.Unauthorized("x"), 401),
    (errors.Forbidden("x"), 403),
    (errors.NotFound(), 404),
    (errors.Conflict("x"), 409),
    (errors.PayloadTooLarge("x"), 413),
    (errors.UnsupportedMediaType("x"), 415),
    (errors.Unprocessable("x"), 422),
    (errors.TooManyRequests("x"), 429),
    (errors.UpstreamFailed("x"), 502),
    (errors.ServiceUnavailable("x"), 503),
    # kinds named by the services and the web layer take their ancestor's status
    (ModelNotFound("x"), 404),
    (AgentUnavailable("x"), 404),
    (ChatNotFound("x"), 404),
    (InvalidApiKey("x"), 401),
    (RateLimited("x"), 429),
    (HttpRefusal("x", status=504), 504),
])
def test_each_kind_of_refusal_has_its_status(error, status):
    assert status_of(error) == status


@pytest.mark.parametrize(("kind", "code"), [
    (errors.ApiError, "bad_request"), (errors.BadRequest, "bad_request"),
    (errors.Unauthorized, "unauthorized"), (errors.Forbidden, "forbidden"),
    (errors.NotFound, "not_found"), (errors.Conflict, "conflict"),
    (errors.PayloadTooLarge, "payload_too_large"),
    (errors.UnsupportedMediaType, "unsupported_media_type"),
    (errors.Unprocessable, "invalid_value"), (errors.TooManyRequests, "too_many_requests"),
    (errors.UpstreamFailed, "upstream_error"), (errors.ServiceUnavailable, "unavailable"),
    (ModelNotFound, "model_not_found"), (AgentUnavailable, "agent_unavailable"),
    (ChatNotFound, "chat_not_found"), (InvalidApiKey, "invalid_api_key"),
    (RateLimited, "rate_limit_exceeded"), (HttpRefusal, "bad_request"),
])
def test_each_kind_of_refusal_has_its_code_unless_one_is_given(kind, code):
    assert kind("x").code == code
    assert kind("x", code="other").code == "other"


def _answer(path: str, error: errors.ApiError) -> tuple[int, dict, dict[bytes, bytes]]:
    response = error_response(Request("GET", path.encode(), []), error)
    body = json.loads(response.content.body)
    return response.status, body, {name.lower(): value for name, value in response.headers}


def test_a_refusal_is_answered_in_our_shape_under_api():
    status, body, _ = _answer("/api/diary", errors.Unprocessable(
        "A time is HH:MM.", field="opens"))
    assert (status, body) == (422, {"error": {
        "code": "invalid_value", "message": "A time is HH:MM.", "field": "opens"}})


def test_a_refusal_is_answered_in_the_openai_shape_under_v1():
    status, body, _ = _answer("/v1/chat/completions", ModelNotFound(
        "The model 'x' does not exist.", field="model"))
    assert (status, body) == (404, {"error": {
        "message": "The model 'x' does not exist.", "type": "invalid_request_error",
        "param": "model", "code": "model_not_found"}})


def test_waiting_becomes_retry_after_and_a_web_refusal_keeps_its_headers():
    status, body, headers = _answer("/api/auth/login", errors.TooManyRequests(
        "Too many failed sign-ins.", code="too_many_attempts", retry_after=7))
    assert (status, body["error"]["code"], headers[b"retry-after"]) == (
        429, "too_many_attempts", b"7")
    assert b"retry-after" not in _answer("/api/x", errors.Conflict("x"))[2]
    _, _, headers = _answer("/v1/models", RateLimited("slow down", headers={
        "x-ratelimit-limit-requests": "60", "Retry-After": "3"}))
    assert (headers[b"x-ratelimit-limit-requests"], headers[b"retry-after"]) == (b"60", b"3")
