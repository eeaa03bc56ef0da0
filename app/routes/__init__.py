"""HTTP routes. Each module registers its handlers with ``register(router)``.

Handlers stay thin: parse, authorise, call a service, render.
"""
