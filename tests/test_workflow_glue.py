"""Library functions the workflow's common rules call: shipped overlays and scheduler timers."""

from __future__ import annotations

import threading
from pathlib import Path

from dprepro.config.overlays import embedded_default_to_lay_under
from dprepro.runtime.scheduler_timers import cancel_scheduler_timers

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "config"


def test_a_shipped_overlay_alone_gets_the_embedded_default_underneath():
    assert embedded_default_to_lay_under([SHIPPED / "full.yaml"], SHIPPED) == \
        (SHIPPED / "config.yaml").resolve()
    assert embedded_default_to_lay_under([SHIPPED / "paper.yaml"], SHIPPED) is not None


def test_the_embedded_default_loaded_or_a_user_overlay_changes_nothing(tmp_path):
    assert embedded_default_to_lay_under(
        [SHIPPED / "config.yaml", SHIPPED / "full.yaml"], SHIPPED) is None
    own = tmp_path / "mine.yaml"
    own.write_text("seed: 1\n")
    assert embedded_default_to_lay_under([own], SHIPPED) is None
    assert embedded_default_to_lay_under([], SHIPPED) is None


def test_only_the_schedulers_timers_are_cancelled():
    namespace = {}
    # a function whose code says it was defined in Snakemake's scheduler module
    exec(compile("def rerun():\n    pass\n", "/x/snakemake/scheduling/job_scheduler.py", "exec"),
         namespace)
    scheduler = threading.Timer(3600, namespace["rerun"])
    other = threading.Timer(3600, lambda: None)
    scheduler.start()
    other.start()
    try:
        assert cancel_scheduler_timers() == 1
        scheduler.join(timeout=5)
        assert not scheduler.is_alive()
        assert other.is_alive()
    finally:
        other.cancel()
        scheduler.cancel()
