"""Long-run fuzzing of name normalisation and screening: the normal form is stable,
checking gives a verdict, pasting gives a result or ``ScreeningError``."""

from _harness import allowed, instrumented, run

(screening,) = instrumented("core.screening")


def one_input(fdp):
    caller = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 200))
    listed = [fdp.ConsumeUnicodeNoSurrogates(40) for _ in range(fdp.ConsumeIntInRange(0, 5))]
    normal = screening.normalise_name(caller)
    assert screening.normalise_name(normal) == normal
    screening.check_name(caller, listed)
    with allowed(screening.ScreeningError):
        screening.parse_pasted_names(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()))


if __name__ == "__main__":
    run(one_input)
