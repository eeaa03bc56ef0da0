"""Long-run fuzzing of a carrier webhook as the signalling reads it: the form body
(pairs or ``FormError``) and the signature check over any URL, query and header
(true or false, never an exception)."""

from _harness import allowed, instrumented, run

(signature,) = instrumented("core.twilio_signature")


def one_input(fdp):
    url = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 80))
    header = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 40)).decode("latin-1")
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
    pairs = []
    with allowed(signature.FormError):
        pairs = signature.parse_form(body)
    assert signature.verify("credential", url, pairs, header) in (True, False)


if __name__ == "__main__":
    run(one_input)
