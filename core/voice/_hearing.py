"""When a caller starts and stops speaking, and when they speak over the agent: sans-IO.

``SpeechDetector`` is fed, per frame of caller audio, two measures the adapter takes
with the kernels (``kernels.energy.rms`` and ``zero_crossings``) and the frame's
length; and, per frame of the agent's own speech sent down the line, that frame's
level. It returns ``Heard`` bits. No absolute level decides alone, because a real
line's speech arrives anywhere between −45 and −10 dBFS over noise of its own:

* **The noise floor** is tracked per call. It falls quickly to a quieter frame, rises
  slowly through frames that are not speech-like, and is never below the quietest
  frame of the last one to two seconds (so a noise that starts and stays is floor
  within two seconds, while a sentence, which has its gaps, does not become floor).
* **Speech-like frames** are at or above the ``speech_rms`` dial and cross zero often
  enough to be a voice rather than mains hum or rumble. A run of them begins on a
  frame at least ``ONSET_MARGIN_DB`` above the floor and goes on through frames at
  least ``HOLD_MARGIN_DB`` above it; speech starts once the run reaches
  ``min_speech_ms`` (gaps up to ``ONSET_GAP_MS`` do not break it). It ends once frames
  have stayed below the hold margin for the configured pause. The first ``LEARN_MS``
  of a call only teach the floor, which then follows every frame.
* **Over the agent's speech** a frame must also be louder than the echo the agent's
  own audio could make (its level less ``ECHO_LOSS_DB``) and reach the ``barge_rms``
  dial, for ``barge_min_ms``; speech that starts so is reported as ``BARGE_IN`` as
  well as ``SPEECH_START``. The audio that could make the echo is the loudest frame
  played within ``ECHO_WINDOW_MS`` until the line's echo delay is learnt (the lag at
  which what was played best matches what is heard), then the frames played at that
  delay and one either side of it only: a word's first syllable is judged against the
  echo that is coming back, not against the agent's louder next one.

``since_onset`` tells how much audio (samples) lies between the first frame of the
speech just reported and the end of the current frame: the adapter keeps that and a
pre-roll before it for the recogniser, so no turn loses its first syllable. A word
that starts with syllables too short to make a run of their own (a short "Is the…"
buried in noise) is dated back to the first of them: an onset run that began within
``ONSET_CHAIN_MS`` of an earlier one that fell through starts where that one did, up
to ``ONSET_LOOKBACK_MS`` back.
"""

from __future__ import annotations

__all__ = [
    "ECHO_LOSS_DB",
    "ECHO_MAX_DELAY_MS",
    "HOLD_MARGIN_DB",
    "MIN_CROSSINGS_PER_SECOND",
    "ONSET_GAP_MS",
    "ONSET_LOOKBACK_MS",
    "ONSET_MARGIN_DB",
    "Heard",
    "SpeechDetector",
    "level_db",
]

import enum
import math
from collections import deque

from ._dials import PhoneDials


class Heard(enum.IntFlag):
    """What one frame of caller audio made of the line (0: nothing new)."""

    #: The caller started speaking.
    SPEECH_START = 1
    #: The caller has been quiet for the configured pause after speaking.
    SPEECH_END = 2
    #: The speech that started was over the agent's own (always with SPEECH_START).
    BARGE_IN = 4


# The bits as plain ints: an IntFlag operation per frame costs more than the rules.
_START, _END, _BARGE = 1, 2, 4
assert (_START, _END, _BARGE) == tuple(Heard), "Heard changed"

#: How far above the noise floor a frame must be to count towards a start of speech.
ONSET_MARGIN_DB = 10.0
#: How far above the floor a frame still counts as speech once the caller speaks
#: (lower than the onset margin: the tail of a word is quieter than its start).
HOLD_MARGIN_DB = 5.0
#: Below this many zero crossings a second a frame is hum or rumble, not a voice
#: (50 Hz mains crosses 100 times a second; a voice, even a low one, far more often).
MIN_CROSSINGS_PER_SECOND = 150.0
#: The first audio of a call only teaches the floor (the opening plays over it anyway).
LEARN_MS = 300
#: Quiet inside a starting word (a stop consonant) that does not break the onset.
ONSET_GAP_MS = 40
#: An onset run beginning within this long of the end of one that fell through (a
#: syllable too short to start speech alone) is the same word: its onset is that one's.
ONSET_CHAIN_MS = 300
#: The furthest back a speech onset is dated before the run that started it.
ONSET_LOOKBACK_MS = 500
#: The echo of the agent's speech is taken to be at least this much below it: real
#: lines return 20 dB or more (echo cancellers far more); 2 dB is margin, and the
#: loudest frame of the window stands for the whole of it.
ECHO_LOSS_DB = 18.0
#: Until the line's echo delay is learnt, the agent's audio is taken to echo back
#: within this window of caller audio.
ECHO_WINDOW_MS = 80
#: The longest echo delay learnt (a carrier's round trip included).
ECHO_MAX_DELAY_MS = 140
#: Frames heard over the agent and above the floor before the learnt delay counts.
ECHO_DELAY_LEARN_FRAMES = 25
#: Share of each lag's score kept per such frame (about a second of memory).
ECHO_DELAY_MEMORY = 0.98
#: The floor is never below the quietest frame of the last one to two of these.
FLOOR_BLOCK_MS = 1000
#: Share of the way to a quieter frame the floor falls in one 20 ms frame.
FLOOR_FALL = 0.1
#: Share of the way to a louder, not speech-like frame the floor rises in 20 ms.
FLOOR_RISE = 0.05
#: Share of the way to any frame the floor moves in 20 ms while it learns: the first
#: frame (the resampler's start) may be quieter than the line.
FLOOR_LEARN = 0.2
#: Nothing on a line is quieter than this (digital silence, μ-law's smallest step).
SILENCE_DB = -90.0

_FRAME_MS = 20.0
_SILENCE_LEVEL = 10 ** (SILENCE_DB / 20)


def level_db(level: float) -> float:
    """A level of full scale (0.0 to 1.0) in dBFS, never below ``SILENCE_DB``."""
    return 20.0 * math.log10(level) if level > _SILENCE_LEVEL else SILENCE_DB


class SpeechDetector:
    """Start and end of the caller's speech, and barge-in, for one call.

    Call ``played(level)`` for each frame of the agent's audio as it goes out, and
    ``hear(level, crossings, samples)`` for each frame of caller audio; ``hear``
    returns ``Heard`` bits. Durations count samples at ``sample_rate``."""

    def __init__(self, dials: PhoneDials, sample_rate: int) -> None:
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        self.sample_rate = sample_rate
        self.speech_db = level_db(dials.speech_rms)
        self.barge_db = level_db(dials.barge_rms)
        self._min_speech = self._samples(dials.min_speech_ms)
        self._barge_min = self._samples(dials.barge_min_ms)
        self._silence = self._samples(dials.silence_threshold_ms)
        self._gap = self._samples(ONSET_GAP_MS)
        self._chain = self._samples(ONSET_CHAIN_MS)
        self._lookback = self._samples(ONSET_LOOKBACK_MS)
        self._learn = self._samples(LEARN_MS)
        self._heard = 0  # samples heard so far, up to the learning time
        self._block = self._samples(FLOOR_BLOCK_MS)
        #: True from a speech start to the speech end that follows it.
        self.speaking = False
        #: The noise floor in dBFS; None until the first frame.
        self.floor: float | None = None
        self._now = 0  # samples heard in all, to the end of the current frame
        self._onset_at = 0  # where the current (or starting) speech began, in samples
        self._run_end_at = -self._chain - 1  # the end of the last speech-like frame of a run
        self._onset_run = 0  # speech-like samples in the run towards a start
        self._gap_run = 0  # samples since the last speech-like one, in that run
        self._quiet_run = 0  # samples below the hold margin, while speaking
        self._learning = True  # while the first LEARN_MS only teach the floor
        # The quietest frame of this block, and of this block and the last together
        # (-inf until a whole block has been heard: no floor from them yet).
        self._block_min, self._quietest, self._block_fill = math.inf, -math.inf, 0
        self._played_peak = 0.0  # loudest agent frame since the last caller frame
        # The agent's level per caller frame, newest first: index k was played k frames
        # before the current one.
        lags = max(1, round(ECHO_MAX_DELAY_MS / _FRAME_MS)) + 1
        self._played_levels = [0.0] * lags
        self._lag_scores = [0.0] * lags  # how well each lag's level matches what is heard
        self._lag_frames = 0  # frames that have taught the lag scores
        #: The lags whose audio may echo in the current frame: [lo, hi).
        self._echo_lo, self._echo_hi = 0, max(1, round(ECHO_WINDOW_MS / _FRAME_MS))
        self._echo_peak = 0.0  # the loudest of them; 0.0: none

    def _samples(self, milliseconds: int) -> int:
        return milliseconds * self.sample_rate // 1000

    @property
    def over_agent(self) -> bool:
        """Whether agent audio that could echo in the last frame went out."""
        return self._echo_peak > 0.0

    @property
    def since_onset(self) -> int:
        """Samples from the first of the current (or just started) speech to now."""
        return self._now - self._onset_at

    @property
    def echo_delay_frames(self) -> int | None:
        """The line's echo delay in frames once learnt, else None."""
        if self._lag_frames < ECHO_DELAY_LEARN_FRAMES:
            return None
        scores = self._lag_scores
        return scores.index(max(scores))

    def played(self, level: float) -> None:
        """A frame of the agent's audio at ``level`` (0.0 to 1.0) went out."""
        if level > self._played_peak:
            self._played_peak = level

    def hear(self, level: float, crossings: int, samples: int) -> int:
        """One frame of caller audio: its RMS level (0.0 to 1.0), its zero crossings and
        its length in samples. Returns the ``Heard`` bits it causes."""
        if samples <= 0:
            return 0  # no time passed
        self._now += samples
        history = self._played_levels
        history.pop()
        history.insert(0, self._played_peak)
        self._played_peak = 0.0
        self._echo_peak = peak = max(history[self._echo_lo:self._echo_hi])
        db = 20.0 * math.log10(level) if level > _SILENCE_LEVEL else SILENCE_DB
        floor = self._track_floor(db, samples, peak > 0.0)
        if self.speaking:
            return self._while_speaking(db, floor, samples)
        if not self._onset_run and db < floor + HOLD_MARGIN_DB:
            # Most frames of a call: the line at its floor, nothing under way.
            if self._learning:
                self._learned(samples)
            return 0
        voiced = crossings * self.sample_rate >= MIN_CROSSINGS_PER_SECOND * samples
        return self._towards_onset(level, db, floor, voiced, samples)

    def _learned(self, samples: int) -> None:
        self._heard += samples
        self._learning = self._heard <= self._learn

    # -- the noise floor

    def _track_floor(self, db: float, samples: int, over_agent: bool) -> float:
        """The floor after a frame at ``db``; this runs for every frame, so its figures
        are kept ready (the quietest of the blocks is worked out when either changes)."""
        floor = self.floor
        if floor is None:
            floor = db
        elif self._learning:
            floor += (db - floor) * FLOOR_LEARN
        elif db < floor:
            floor += (db - floor) * FLOOR_FALL
        elif not over_agent and db < floor + ONSET_MARGIN_DB and not self.speaking:
            floor += (db - floor) * FLOOR_RISE
        # The quietest frame of the last one to two seconds: what the line is when
        # nobody speaks. The agent's echo is no part of it.
        if not over_agent and db < self._block_min:
            self._block_min = db
            if db < self._quietest:
                self._quietest = db
        self._block_fill += samples
        if self._block_fill >= self._block:
            last = self._block_min
            self._block_fill, self._block_min = 0, math.inf
            # No floor from the blocks until one whole block has been heard.
            self._quietest = last if last < math.inf else -math.inf
        if floor < self._quietest:
            floor = self._quietest
        self.floor = floor
        return floor

    # -- the agent's echo

    def _echo_db(self) -> float:
        """The loudest echo the agent's audio could make in the current frame, in dBFS."""
        peak = self._echo_peak
        return level_db(peak) - ECHO_LOSS_DB if peak > 0.0 else SILENCE_DB

    def _learn_echo_delay(self, level: float) -> None:
        """A frame above the floor over the agent, no speech under way: score each lag by
        how well the agent's level then matches what is heard now, and once enough
        frames have taught them, judge echo only by the best lag and one either side."""
        scores = self._lag_scores
        for lag, played in enumerate(self._played_levels):
            scores[lag] = scores[lag] * ECHO_DELAY_MEMORY + level * played
        self._lag_frames += 1
        if self._lag_frames >= ECHO_DELAY_LEARN_FRAMES:
            best = scores.index(max(scores))
            self._echo_lo, self._echo_hi = max(0, best - 1), best + 2

    # -- rules

    def _towards_onset(self, level: float, db: float, floor: float, voiced: bool,
                       samples: int) -> int:
        over_agent = self._echo_peak > 0.0
        if over_agent:
            echo_db = self._echo_db()
            # The echo rule does the floor's work here; the floor itself settles on
            # the quietest of the echo, so only the hold margin is asked over it.
            begins = goes_on = max(floor + HOLD_MARGIN_DB, self.speech_db, echo_db,
                                   self.barge_db)
            if not self._onset_run and not self._learning:
                self._learn_echo_delay(level)
        else:
            # A run begins on a frame well above the floor and goes on through frames
            # above the lower hold margin: the vowel, then the rest of the syllable.
            goes_on = max(floor + HOLD_MARGIN_DB, self.speech_db)
            begins = max(floor + ONSET_MARGIN_DB, self.speech_db)
        if self._learning:
            self._learned(samples)
        if voiced and db >= (goes_on if self._onset_run else begins) and not self._learning:
            if self._onset_run == 0:
                self._begin_run(samples)
            self._onset_run += samples
            self._gap_run = 0
            self._run_end_at = self._now
        elif self._onset_run:
            self._gap_run += samples
            if self._gap_run > self._gap:
                self._onset_run = self._gap_run = 0
        required = self._barge_min if over_agent else self._min_speech
        if not self._onset_run or self._onset_run < max(required, 1):
            return 0
        self.speaking = True
        self._onset_run = self._gap_run = self._quiet_run = 0
        self._run_end_at = -self._chain - 1  # the next turn's runs start afresh
        return _START | _BARGE if over_agent else _START

    def _begin_run(self, samples: int) -> None:
        """A run towards a start begins with the current frame: date the onset to it,
        or to an earlier run of the same word that fell through."""
        begins_at = self._now - samples
        if begins_at - self._run_end_at <= self._chain:
            self._onset_at = max(self._onset_at, begins_at - self._lookback)
        else:
            self._onset_at = begins_at

    def _while_speaking(self, db: float, floor: float, samples: int) -> int:
        needed = max(floor + HOLD_MARGIN_DB, self.speech_db, self._echo_db())
        if db >= needed:
            self._quiet_run = 0
            return 0
        self._quiet_run += samples
        if self._quiet_run < self._silence:
            return 0
        self.speaking = False
        self._quiet_run = 0
        return _END
