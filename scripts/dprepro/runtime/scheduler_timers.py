"""Stop the job-rate limiter's pending re-scheduling timers once a Snakemake run is over.

Snakemake's scheduler starts a timer of one rate-limiter timespan after every
scheduling pass that leaves jobs waiting, and each timer's pass starts another
(snakemake/snakemake PR #3744), so passes multiply with finished jobs; each pass
stats every input of every waiting job (the rrr tables wait on 120-240 files).
profiles/default therefore sets a long timespan, and its last timers, which are not
daemon threads, would keep the finished process alive that long: the workflow's
``onsuccess`` / ``onerror`` handlers cancel them here. Only timers whose function
was defined in Snakemake's ``job_scheduler.py`` are touched (read from the code
object, so this module needs no Snakemake import).
"""

from __future__ import annotations

import threading
from pathlib import Path

__all__ = ["SCHEDULER_FILE", "cancel_scheduler_timers"]

SCHEDULER_FILE = "job_scheduler.py"


def cancel_scheduler_timers() -> int:
    """Cancel every pending :class:`threading.Timer` started by Snakemake's scheduler.

    Returns
    -------
    int
        How many timers were cancelled.
    """
    cancelled = 0
    for thread in threading.enumerate():
        code = getattr(getattr(thread, "function", None), "__code__", None)
        if isinstance(thread, threading.Timer) and code is not None:
            if Path(code.co_filename).name == SCHEDULER_FILE:
                thread.cancel()
                cancelled += 1
    return cancelled
