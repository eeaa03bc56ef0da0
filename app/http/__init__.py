"""HTTP plumbing shared by every route: how the kinds of ``app.errors`` become
responses, request bodies, who is calling, the front door (proxies, slow clients,
same-origin writes, security headers), streamed answers and disconnects, the
OpenAPI document and the request log."""
