"""The platform every feature stands on: accounts, sessions and API keys, settings,
the audit trail, projects, providers, agents, Libraries, tools, chats, usage, and the
pipeline that runs an agent's turn (with the call context it carries on a call).

Nothing here knows the web, telephony, the diary or notifications: a service raises
the kinds of ``app.errors``, and the features plug into it (the diary registers its
call tools and hands the pipeline its clock) from above.
"""
