"""The per-account diary: opening hours, free slots, appointments and references.

spec: telephony.md "Diary (per account)", "Appointment", "Limits". Pure: the app
passes ``now``, the stored closures and appointments, and random bytes for references.

What to call, in order:

1. ``parse_diary`` — a request body to a valid ``Diary`` (or ``DiaryError`` naming the
   field, ``hours[3].closes_minute``).
2. ``free_slots`` — the slots to offer; ``speak_time`` to say one.
3. ``check_slot`` — inside the booking transaction; ``ends_at_for`` and
   ``reference_from`` complete the appointment; ``transition`` gives its state and the
   notification to emit.
4. ``ChangeGate.attempt`` — a change on a call, three refused attempts at most.

The modules behind it: ``_hours`` (settings and opening periods), ``_slots`` (the slot
grid across clock changes), ``_speech`` (words and references), ``_appointments``
(the state machine and the change-by-telephone rule).
"""

# Each module's public names are listed once, in its ``__all__``, and offered here.
from . import _appointments, _hours, _slots, _speech
from ._appointments import *  # noqa: F403
from ._hours import *  # noqa: F403
from ._slots import *  # noqa: F403
from ._speech import *  # noqa: F403

__all__ = [
    *_appointments.__all__,
    *_hours.__all__,
    *_slots.__all__,
    *_speech.__all__,
]
