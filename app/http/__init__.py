"""HTTP plumbing shared by every route: how the kinds of ``app.errors`` become
responses, request bodies, who is calling, the front door (proxies, slow clients,
same-origin writes, security headers), the server's protocol (deadlines, heads sent
with their bodies, the direct routes answered without ASGI), streamed answers and
disconnects, the OpenAPI document and the request log."""
