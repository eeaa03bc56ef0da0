"""Telephone lines answered by an agent: settings, lines, signalling, limits, readiness,
the call log, the voice of a call and the speech engines it talks through
(spec: telephony.md).

``app.telephony.service.Telephony`` holds the parts; the routes are
``app.routes.telephony_admin``, ``telephony_carrier`` and ``telephony_pbx``. Pure rules
live in ``core`` (``refusals``, ``twilio_signature``, ``twiml``, ``tickets``,
``call_outcome``, ``phone_numbers``); every counter lives in PostgreSQL.
"""
