"""Whether every serving process listens for the telephone system's audio where
``telephony.pbx_listen`` says, and the sentence the readiness check gives.

Each process binds the address at its own start, so after a change some processes may
listen on the old address and some on none; with several workers or hosts, one
process's answer says nothing of the others. Each process's lease records what it
listens on (``app.telephony.process_listeners``); this judges the lot. Pure.
"""

from __future__ import annotations

__all__ = ["ProcessListener", "judge_listeners"]

from collections.abc import Sequence

from .records import frozen


@frozen
class ProcessListener:
    """One serving process and the address it listens on for audio, or None."""

    host: str
    process_id: int
    address: str | None


def _name(process: ProcessListener) -> str:
    return f"process {process.process_id} on {process.host}"


def _doing(process: ProcessListener) -> str:
    if process.address is None:
        return f"{_name(process)} listens nowhere"
    return f"{_name(process)} listens on {process.address}"


def judge_listeners(configured: str, processes: Sequence[ProcessListener]) -> tuple[bool, str]:
    """``(passed, sentence)``: passed when at least one process serves and every one
    listens on ``configured``; the sentence names each process."""
    if not processes:
        return False, (f"pbx_listen is {configured} but no svc process is serving, so "
                       "nothing listens there. Start svc.")
    astray = [process for process in processes if process.address != configured]
    if not astray:
        count = "the one process" if len(processes) == 1 else f"all {len(processes)} processes"
        names = ", ".join(_name(process) for process in processes)
        return True, f"Listening on {configured} in {count}: {names}."
    return False, (f"pbx_listen is {configured} but {len(astray)} of {len(processes)} "
                   f"processes do not listen there: {'; '.join(map(_doing, astray))}. The "
                   "address is bound only at start: restart the deployment.")
