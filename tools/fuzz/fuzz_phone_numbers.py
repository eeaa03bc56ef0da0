"""Long-run fuzzing of E.164 normalisation and the private-source check: a number or
``InvalidPhoneNumber``; a verdict for any address text."""

from _harness import allowed, instrumented, run

(phone_numbers,) = instrumented("core.phone_numbers")


def one_input(fdp):
    text = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 64))
    with allowed(phone_numbers.InvalidPhoneNumber):
        number = phone_numbers.normalise_e164(text)
        assert phone_numbers.normalise_e164(number) == number
    assert phone_numbers.is_private_source(text) in (True, False)


if __name__ == "__main__":
    run(one_input)
