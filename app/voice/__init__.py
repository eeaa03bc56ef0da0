"""The voice of a telephone call: its engines and its pipeline."""
