"""Outward notifications (spec: telephony.md "Notification target", "Outward
notifications"): the outbox an event writes to (``outbox``), the targets
(``targets``; their endpoints are ``app.routes.notify_targets``), the worker that
posts (``worker``) and the record of every attempt (``attempts``). Sending through
the egress gate is ``adapters.notify_sender``."""
