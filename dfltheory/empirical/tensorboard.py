"""TensorBoard event files of a run, next to its ``metrics.jsonl``: ``tensorboard --logdir runs`` compares runs.

:class:`EventLog` writes, through ``torch.utils.tensorboard.SummaryWriter``, one scalar per numeric key of every
measured record (the metrics, the theorem quantities of :mod:`dfltheory.empirical.metrics` and ``lr``; a value
written ``null`` in ``metrics.jsonl``, a non-finite one, as NaN; booleans such as ``finite`` left out) at step =
the round, and the run's config once, as text (tag ``config``) and as hyper-parameters (TensorBoard's HParams
dashboard, with the recorded keys as its metrics). A resumed run writes its events afresh: the directory's event
files are deleted and the records ``metrics.jsonl`` keeps are written again before training goes on, so the events
hold every measured round once and equal the metrics, whatever became of the earlier part's events (a kill before
they were flushed included). The event files are extra files of the run directory, not validated by
:mod:`dfltheory.empirical.rundir`; ``train --no-tensorboard`` writes none.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

#: the name every TensorBoard event file starts with
PREFIX = "events.out.tfevents."


def scalars(record: Mapping) -> dict[str, float]:
    """The scalars of a metrics record: every number but ``round`` (None, a non-finite value, as NaN)."""
    return {k: math.nan if v is None else float(v) for k, v in record.items()
            if k != "round" and (v is None or isinstance(v, (int, float)) and not isinstance(v, bool))}


class EventLog:
    """The event files of run directory ``out`` for a run of ``config``, starting with ``records`` (a resumed run's
    kept records; every event file already in ``out`` is deleted first)."""

    def __init__(self, out, config: Mapping, records: Sequence[Mapping] = ()):
        from torch.utils.tensorboard import SummaryWriter

        for old in Path(out).glob(PREFIX + "*"):
            old.unlink()
        self.writer = SummaryWriter(str(out), flush_secs=30)
        self.config, self.started = dict(config), False
        for record in records:
            self.add(record)

    def add(self, record: Mapping) -> None:
        """Write the scalars of one record at step ``record['round']`` as one event (one per scalar, as
        ``add_scalar`` writes them, costs 5x the time), the config first, with the first record."""
        from tensorboard.compat.proto.summary_pb2 import Summary
        from torch.utils.tensorboard.summary import scalar

        values = scalars(record)
        if not self.started:
            self._config(values)
        event = Summary(value=[scalar(key, value).value[0] for key, value in values.items()])
        self.writer.file_writer.add_summary(event, record["round"])

    def _config(self, metrics: Mapping) -> None:
        from torch.utils.tensorboard.summary import hparams

        text = json.dumps(self.config, indent=2, sort_keys=True, default=str)
        self.writer.add_text("config", "\n".join("    " + line for line in text.splitlines()))  # a Markdown code block
        shown = {k: (json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)
                 for k, v in self.config.items() if isinstance(v, (bool, int, float, str, dict, list))}
        for summary in hparams(shown, dict.fromkeys(metrics, 0.0)):
            self.writer.file_writer.add_summary(summary)
        self.started = True

    def close(self) -> None:
        self.writer.close()
