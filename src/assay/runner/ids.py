"""Sets of sample ids for runs of any size: 8 bytes an id instead of a Python string in a set
(about 90 bytes: 90 MB at a million samples).

An ``IdIndex`` holds the ids' 64-bit hashes, sorted. "Not in" is certain; "in" is certain up to
a hash collision (about one chance in 10^7 for two sets of a million ids), which the callers
check for: ``first_duplicate`` rereads the ids whose hashes repeat and compares the text, and
a resumed run checks that it skipped exactly as many samples as the results file holds.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SMALL = 50_000
"""Up to this many ids, repeats are counted and sets sorted and searched in Python (a few ms),
which spares a short run numpy's import; past it numpy's sort and search are faster than its import costs."""


def id_hash(sample_id: str) -> int:
    """The 64-bit hash an index keeps of ``sample_id`` (stable within the process)."""
    return hash(sample_id)


class IdHashes:
    """Hashes of ids as they come (``add``), in order: 8 bytes each."""

    def __init__(self) -> None:
        self.values = array("q")

    def add(self, sample_id: str) -> None:
        self.values.append(id_hash(sample_id))

    def __len__(self) -> int:
        return len(self.values)

    def repeated(self) -> set[int]:
        """The hashes seen more than once (a repeated id, or rarely two ids with one hash)."""
        if len(self.values) <= SMALL:
            counts = Counter(self.values)
            return {h for h, n in counts.items() if n > 1}
        import numpy as np

        ordered = np.sort(np.frombuffer(self.values, dtype=np.int64))
        return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())

    def index(self) -> IdIndex:
        if len(self.values) <= SMALL:
            return IdIndex(array("q", sorted(set(self.values))))
        import numpy as np

        return IdIndex(np.unique(np.frombuffer(self.values, dtype=np.int64)))


class IdIndex:
    """A set of ids as sorted unique 64-bit hashes (see the module's docstring): an ``array``
    searched by bisection for a few, a numpy array for many."""

    def __init__(self, hashes: np.ndarray | array | None = None) -> None:
        self._hashes = hashes if hashes is not None else array("q")

    def __len__(self) -> int:
        return len(self._hashes)

    def contains(self, ids: Sequence[str]) -> list[bool]:
        """For each id, whether the index (probably: see above) holds it; False is certain."""
        hashes = self._hashes
        if not len(hashes) or not ids:
            return [False] * len(ids)
        if isinstance(hashes, array):
            return [_in_sorted(hashes, id_hash(i)) for i in ids]
        import numpy as np

        wanted = np.fromiter((id_hash(i) for i in ids), dtype=np.int64, count=len(ids))
        at = np.minimum(np.searchsorted(hashes, wanted), len(hashes) - 1)
        return (hashes[at] == wanted).tolist()


def _in_sorted(values: array, value: int) -> bool:
    at = bisect_left(values, value)
    return at < len(values) and values[at] == value


def first_duplicate(numbered: Callable[[], Iterable[tuple[int, str]]],
                    hashes: IdHashes) -> tuple[str, int, int] | None:
    """The first id that repeats, as ``(id, first line, repeated line)``, or None. ``hashes``
    are every id's; ``numbered`` reads the ``(line, id)`` pairs again, which happens only when a
    hash repeats, keeping the text of just those ids."""
    suspects = hashes.repeated()
    if not suspects:
        return None
    seen: dict[str, int] = {}
    for line, sample_id in numbered():
        if id_hash(sample_id) in suspects:
            if sample_id in seen:
                return sample_id, seen[sample_id], line
            seen[sample_id] = line
    return None
