"""Long-run fuzzing of the booking rules: any diary and any aware start, anywhere in
the calendar, get a verdict from ``check_slot``."""

import datetime as dt

from _harness import allowed, instrumented, run

(diary,) = instrumented("core.diary")

ZONES = ("UTC", "Europe/London", "Pacific/Kiritimati", "America/St_Johns",
         "Australia/Lord_Howe", "Pacific/Pago_Pago")
NOW = dt.datetime(2026, 3, 29, 0, 30, tzinfo=dt.UTC)
SECONDS = int((dt.datetime.max - dt.datetime.min).total_seconds())


def one_input(fdp):
    hours = [diary.OpeningPeriod(fdp.ConsumeIntInRange(0, 6), opens, fdp.ConsumeIntInRange(
        opens + 1, 1440)) for opens in [fdp.ConsumeIntInRange(0, 1439) for _ in range(3)]]
    with allowed(diary.DiaryError):
        book = diary.Diary(timezone=fdp.PickValueInList(list(ZONES)),
                           slot_minutes=fdp.ConsumeIntInRange(5, 480),
                           lead_minutes=fdp.ConsumeIntInRange(0, 10080),
                           horizon_days=fdp.ConsumeIntInRange(1, 365), enabled=True,
                           hours=tuple(hours))
        offset = dt.timezone(dt.timedelta(minutes=fdp.ConsumeIntInRange(-1439, 1439)))
        start = (dt.datetime.min + dt.timedelta(seconds=fdp.ConsumeIntInRange(0, SECONDS)))
        verdict = diary.check_slot(book, set(), [], start.replace(tzinfo=offset), NOW)
        assert isinstance(verdict, diary.SlotVerdict)


if __name__ == "__main__":
    run(one_input)
