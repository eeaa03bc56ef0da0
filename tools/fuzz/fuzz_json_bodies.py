"""Long-run fuzzing of the request bodies read in ``core``: the chat-completions
request (``ChatRequestError``) and the diary (``DiaryError``), from JSON values built
from the fuzzer's bytes or bytes that decode as JSON."""

import json

from _harness import allowed, instrumented, json_value, run

(chat_request, diary) = instrumented("core.chat_request", "core.diary")


def one_input(fdp):
    if fdp.ConsumeBool():
        body = json_value(fdp)  # built, shaped like the bodies the readers expect
    else:
        try:
            body = json.loads(fdp.ConsumeBytes(fdp.remaining_bytes()))
        except (ValueError, RecursionError):
            return  # not JSON: the app refuses it before core sees it
    with allowed(chat_request.ChatRequestError):
        request = chat_request.read_chat_request(body)
        chat_request.question_of(request.messages)
    if isinstance(body, dict):
        with allowed(diary.DiaryError):
            diary.parse_diary(body)


if __name__ == "__main__":
    run(one_input)
