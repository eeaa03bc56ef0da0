"""A change's body made from the body that creates: same fields, each optional."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.http.bodies import Body, change_body


class NewThingBody(Body):
    name: str
    size: int = 1
    note: str | None = None


ThingChangeBody = change_body(NewThingBody, "ThingChangeBody")


def test_every_field_may_be_left_out_and_only_those_sent_are_set():
    assert ThingChangeBody().model_fields_set == set()
    sent = ThingChangeBody.model_validate({"size": 3, "note": None})
    assert (sent.name, sent.size, sent.note) == (None, 3, None)
    assert sent.model_fields_set == {"size", "note"}
    assert ThingChangeBody.__name__ == "ThingChangeBody"
    assert list(ThingChangeBody.model_fields) == list(NewThingBody.model_fields)


@pytest.mark.parametrize("body", [{"size": "3"}, {"colour": "red"}, {"name": 1}])
def test_it_is_as_strict_as_the_body_that_creates(body):
    with pytest.raises(ValidationError):
        ThingChangeBody.model_validate(body)
