"""The diary and the other features around a line's account: appointments, the
screening list, enquiries (messages taken), and the tools an agent uses on a call.

spec: telephony.md "Diary (per account)", "Screening list", "Appointment" (states),
"Tools on a call". The rules are pure and live in ``core.diary`` and
``core.screening``; these modules store, lock and notify.

* ``clock`` — the one source of "now" for the diary's rules, and the diary's zone,
  which the pipeline reads on a call;
* ``diaries`` — settings, opening hours and closures (``/api/diary``);
* ``appointments`` — booking, moving and cancelling, with the outbox events;
* ``screening`` — the screening list (``/api/conflict-names``) and the caller check;
* ``enquiries`` — messages taken on calls (``/api/enquiries``);
* ``call_tools`` — the built-in tools the agent uses on a call;
* ``service`` — ``DiaryServices``, the bundle of the above.
"""
