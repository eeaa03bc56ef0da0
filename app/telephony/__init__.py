"""Telephone lines answered by an agent: settings, lines, signalling, limits, readiness
and the call log (spec: telephony.md).

``app.telephony.service.Telephony`` holds the parts; the routes are
``app.routes.telephony_admin``, ``telephony_carrier`` and ``telephony_pbx``. Pure rules
live in ``core`` (``refusals``, ``twilio_signature``, ``twiml``, ``tickets``,
``call_outcome``, ``phone_numbers``); every counter lives in PostgreSQL.
"""
