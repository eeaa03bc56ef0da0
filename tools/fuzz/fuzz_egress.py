"""Long-run fuzzing of the egress gate: any URL text and resolved addresses give a
decision, never an exception."""

from _harness import instrumented, run

(egress,) = instrumented("core.egress")


def one_input(fdp):
    url = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 100))
    addresses = [fdp.ConsumeUnicodeNoSurrogates(40) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    decision = egress.check_egress(url, addresses, ("Example.org.",))
    assert decision.allowed in (True, False)
    egress.display_host(url)


if __name__ == "__main__":
    run(one_input)
