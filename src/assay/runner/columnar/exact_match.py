"""``exact_match`` over columns: Arrow's ``equal`` kernel.

Text compares byte for byte, which for UTF-8 is character for character; two nulls are equal
(``None == None``) and a null never equals text. With ``trim``, both sides are trimmed of
exactly the characters Python's ``str.strip()`` removes; with ``ignore_case``, ASCII rows are
lower-cased (``casefold`` of ASCII) and other rows go to the object path, since Arrow has no
Unicode case fold. Columns that are not text go to the object path whole.
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from assay.graders.exact_match import ExactMatch, difference_reason
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame
from assay.runner.columnar._reasons import Worded, completed, differ

WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""What ``str.strip()`` removes: the characters ``str.isspace()`` accepts (tests/columnar checks
the list against this Python's Unicode tables)."""


def grade(grader: ExactMatch, frame: Frame, *, workers: int = 1) -> Graded | None:
    out, exp = frame.text("output"), frame.text("expected")
    if out is None or exp is None:
        return None
    cfg = grader.config
    undecided = None
    if not (cfg.trim or cfg.ignore_case):
        same = pc.equal(out, exp)
        if same.null_count:  # null == null passes, null against text fails
            same = pc.if_else(pc.is_null(same), pc.and_(pc.is_null(out), pc.is_null(exp)), same)
    else:  # both sides as text: None is ""
        a, b = frame.filled("output"), frame.filled("expected")
        if cfg.trim:
            a, b = pc.utf8_trim(a, WHITESPACE), pc.utf8_trim(b, WHITESPACE)
        if cfg.ignore_case:
            undecided = ~frame.ascii
            a, b = pc.ascii_lower(a), pc.ascii_lower(b)
        same = pc.equal(a, b)
    passed = same.to_numpy(zero_copy_only=False)

    def explain(rows: np.ndarray, with_details: bool) -> tuple[Worded | list[str | None], None]:
        return completed(differ(out, exp, rows), rows, lambda left: [
            difference_reason(a, b)
            for a, b in zip(frame.values("output", left), frame.values("expected", left))]), None

    return Graded(passed, explain, undecided=undecided)
