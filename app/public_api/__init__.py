"""The chat-completions-compatible API under ``/v1``: key check, rate limit, CORS,
passthrough to provider models and agent runs. Routes live in ``app/routes/v1.py``."""
