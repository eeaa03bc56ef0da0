"""Sans-IO rules and state machines of svc.

Nothing here performs I/O, reads a clock or draws randomness: every function takes
``now``, tokens and configuration as arguments and returns values, events or actions.
"""
