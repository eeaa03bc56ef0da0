"""A simulated call's report as text for a terminal: one line per event, in time order.

What the caller said and what the line said are interleaved on the call's timeline,
then the waits from the end of each of the caller's turns to the first reply audio.
"""

from __future__ import annotations

__all__ = ["describe"]

from adapters.call_simulator.audio import CALL_RATE
from adapters.call_simulator.session import CallReport

_ENDINGS = {
    "caller": "the caller hung up",
    "line": "the line ended the call",
    "refused": "the call was not answered",
    "fault": "the line broke the protocol",
}


def describe(report: CallReport) -> str:
    lines = [f"call over {report.transport} ({report.call_reference or 'no reference'}): "
             f"{_ENDINGS.get(report.ended_by, report.ended_by)}"]
    if report.fault:
        lines.append(f"  problem: {report.fault}")
    events: list[tuple[float, str]] = []
    for turn in report.turns:
        events.append((turn.started_s, f"caller {turn.started_s:6.2f}-{turn.ended_s:6.2f} s  "
                                       f"{_quoted(turn.label)}"))
    for reply in report.replies:
        said = _quoted(reply.transcript) if reply.transcript is not None else "(not recognised)"
        events.append((reply.started_s, f"line   {reply.started_s:6.2f}-{reply.ended_s:6.2f} s  "
                                        f"{said}"))
    lines.extend(text for _, text in sorted(events))
    for timing in report.timings:
        wait = (f"{timing.latency_ms:.0f} ms" if timing.latency_ms is not None
                else "no reply")
        lines.append(f"reply after {wait}: end of {_quoted(timing.turn)} -> first reply audio")
    if report.answered:
        seconds = len(report.heard) / (2 * CALL_RATE)
        lines.append(f"heard {seconds:.1f} s of the line; {report.frames_received} audio "
                     f"frames arrived ({report.odd_frames} not 20 ms long)"
                     + (f"; {report.clears} clears, {report.marks} marks"
                        if report.transport == "carrier" else ""))
        lines.append(f"transfer to {report.transfer_to}" if report.transfer_to
                     else "no transfer: the call ends with a hang-up")
    return "\n".join(lines)


def _quoted(text: str) -> str:
    shown = text if len(text) <= 70 else text[:67] + "..."
    return f'"{shown}"'
