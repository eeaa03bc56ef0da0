"""The svc application, in layers that import only downwards (pyproject.toml's
``app-layers`` contract): the entry points (``cli``, ``main``, ``supervisor``), the web
(``console``, ``routes``, ``public_api``, ``http``), the wiring (``bundle``,
``retention``), the features (``telephony``, ``diary``, ``notify``), the platform
(``services``) and the foundation (``tables``, ``db``, ``errors``, ``config``,
``crypto``)."""
