"""The web console served at ``/``: server-rendered pages over the JSON API.

``app.console.screens`` says which screens exist and who is offered each;
``app.console.pages`` renders them and handles signing in and out; the templates and
the scripts that fill each page from ``/api`` live beside them as package data.
"""

__all__ = ["register"]

from app.console.pages import register
