"""The svc application: HTTP routes, services, persistence, scheduler and CLI."""
