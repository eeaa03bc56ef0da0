"""Outward notifications (spec: telephony.md "Notification target", "Outward
notifications"): the outbox an event writes to, the targets' endpoints, the worker
that posts, and the HTTP sending through the egress gate."""
