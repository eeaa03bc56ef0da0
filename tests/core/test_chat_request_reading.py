"""Reading a chat request: what an accepted one holds, and refusals that name the
message content they are about."""

import pytest

from core.chat_request import ChatRequestError, read_chat_request


def test_an_accepted_request_holds_the_body_as_sent():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": None}],
            "stream": True, "stream_options": {"include_usage": True}, "seed": 1}
    chat = read_chat_request(body)
    assert chat.body is body and chat.model == "m" and chat.messages is body["messages"]
    assert chat.stream is True and chat.include_usage is True
    with pytest.raises(AttributeError):
        chat.model = "other"  # type: ignore[misc]


@pytest.mark.parametrize(("content", "param", "says"), [
    (None, "messages[1].content", "is required"),
    (5, "messages[1].content", "must be a string or a list of parts"),
    ([{"type": "text"}, "x"], "messages[1].content[1]", "must be an object with a type"),
])
def test_a_refused_content_is_named_by_its_place(content, param, says):
    body = {"model": "m", "messages": [{"role": "system", "content": "s"},
                                       {"role": "user", "content": content}]}
    with pytest.raises(ChatRequestError) as refused:
        read_chat_request(body)
    assert refused.value.param == param and says in refused.value.message
