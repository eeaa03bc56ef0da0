"""The voice of a telephone call: the session, its playback, and the two transports.

- ``transport``: what a session needs of an audio connection and of the engines.
- ``playback``: 20 ms frames paced to the caller; synthesised audio cut into frames.
- ``session``: ``run_call``, one call's conversation from the opening to the end.
- ``audiosocket``: the pbx transport (Asterisk AudioSocket over TCP) and its listener.
- ``carrier``: the carrier transport (Twilio Media Streams over a WebSocket).
"""
