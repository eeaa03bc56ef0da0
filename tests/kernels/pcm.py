"""Helpers the kernel tests share: 16-bit PCM from Python ints and back."""

import array

from hypothesis import strategies as st

#: Any 16-bit sample.
samples16 = st.integers(min_value=-32768, max_value=32767)


def pcm(samples) -> bytes:
    """Native-order 16-bit PCM bytes holding ``samples``."""
    return array.array("h", samples).tobytes()


def values(data) -> list[int]:
    """The samples in 16-bit PCM ``data``."""
    return array.array("h", bytes(data)).tolist()


#: Every 16-bit sample once, in ascending order.
EVERY_SAMPLE = pcm(range(-32768, 32768))
