"""anyio I/O around the core: sockets, subprocesses, upstream clients, files.

Adapters never import the web framework or the ORM; the app hands them small protocols.
"""
