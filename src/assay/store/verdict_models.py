"""The verdicts of a finished run, kept for comparisons (``store.verdicts``).

A run's verdicts are stored in parts of at most ``store.verdicts.PART_SAMPLES`` samples, each
part one row of bytes (``service.verdict_table`` writes and reads them: the store only keeps
them). The last part is marked ``final``: parts without a final one are never read as a run's
verdicts, whatever stopped their writing.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from assay.store.models import Base, utcnow


class RunVerdictPart(Base):
    """One part of a run's verdict table: samples in dataset order, ``samples`` of them."""

    __tablename__ = "run_verdicts"

    run_id: Mapped[str] = mapped_column(String(36), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    samples: Mapped[int] = mapped_column(Integer)
    final: Mapped[bool] = mapped_column(Boolean)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


__all__ = ["RunVerdictPart"]
