"""Every pair's counters as arrays, brought up to date from the results log, not re-read.

The ladder's ``pairs`` hash holds six counters per pair (``A|B|matches``, ...): 119,400
fields at 200 versions, three million at 1,000. Reading them all for every refit, ladder
status or scheduling round cost seconds. So the standings snapshot also stores the counters
it was fitted from, as arrays (:meth:`PairCounts.to_blob`), with the results log position
they include; a reader takes those and adds the log entries recorded since (each entry
carries its match's counts), which is O(results since the snapshot), not O(pairs).

The ``pairs`` hash stays the truth the recording script maintains: :func:`read_pair_counts`
falls back to reading it whole (one MULTI with the results count and the log's last id)
when there is no usable snapshot (a ladder written by an older arena, whose snapshot has no
arrays, or a log entry without its ``aborted`` count) -- the data of an existing ladder
reads correctly without a migration.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ._redis import Redis, number, text, text_map
from .keys import Keys
from .recording import LogEntry, read_log_after

COUNTERS: Final = ("matches", "games", "wins", "ties", "losses", "aborted")
"""The counters of a pair, from the side of its smaller version id (the ``pairs`` hash's)."""
BLOB_FIELD: Final = "pairs"
"""Field of the standings hash with the arrays (little-endian int32 rows ``i, j, counters``)."""
META_FIELD: Final = "pairs_meta"
"""Field of the standings hash with ``{"names", "version", "log_id"}`` of those arrays."""
_DTYPE: Final = np.dtype("<i4")


@dataclass(frozen=True)
class PairCounts:
    """The counters of every pair that has a recorded match, as of results count
    ``version`` (the results log up to stream id ``log_id``, "-" for none).

    ``names`` are sorted; row ``r`` is the pair ``names[i[r]] < names[j[r]]`` and rows are
    sorted by ``(i, j)``, so a pair is found by binary search and the arrays are canonical.
    ``counts`` is ``(pairs, len(COUNTERS))`` int64.
    """

    version: int
    log_id: str
    names: tuple[str, ...]
    i: Any
    j: Any
    counts: Any

    def __len__(self) -> int:
        return len(self.i)

    def column(self, counter: str) -> Any:
        return self.counts[:, COUNTERS.index(counter)]

    def rows_of(self, pairs: Sequence[tuple[str, str]]) -> Any:
        """The row of each pair ``(a, b)`` (either order), -1 for a pair without matches."""
        index = {name: k for k, name in enumerate(self.names)}
        n = len(self.names)
        wanted = np.array([_key(index, a, b, n) for a, b in pairs], dtype=np.int64)
        keys = self.i.astype(np.int64) * n + self.j
        at = np.searchsorted(keys, wanted)
        found = (wanted >= 0) & (at < len(keys))
        found[found] = keys[at[found]] == wanted[found]
        return np.where(found, at, -1)

    def lookup(self, versions: Sequence[str], first: Any, second: Any, counter: str) -> Any:
        """``counter`` of each pairing ``(versions[first[k]], versions[second[k]])``, 0 for
        one without matches (``versions`` sorted, ``first < second``): vectorised, for the
        scheduler's half a million pairings."""
        n = len(versions)
        place = {v: k for k, v in enumerate(versions)}
        mine = np.array([place.get(name, -1) for name in self.names], dtype=np.int64)
        out = np.zeros(len(first), dtype=np.int64)
        if not len(self) or not n:
            return out
        x, y = mine[self.i], mine[self.j]
        known = (x >= 0) & (y >= 0)
        keys = x[known] * n + y[known]  # names and versions both sorted: x < y
        values = self.column(counter)[known]
        order = np.argsort(keys)
        keys, values = keys[order], values[order]
        wanted = np.asarray(first, dtype=np.int64) * n + np.asarray(second, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        hit = (keys[at] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
        out[hit] = values[at[hit]]
        return out

    def among(self, versions: Iterable[str]) -> Any:
        """Mask of the rows whose two versions are both in ``versions``."""
        chosen = set(versions)
        member = np.array([name in chosen for name in self.names], dtype=bool)
        if not len(self):
            return np.zeros(0, dtype=bool)
        return member[self.i] & member[self.j]

    def advanced(self, entries: Sequence[LogEntry], log_id: str) -> PairCounts:
        """These counts plus the log ``entries`` (every one must know its ``aborted``)."""
        if not entries:
            return self
        names = tuple(sorted(set(self.names).union(*((e.a, e.b) for e in entries))))
        n = len(names)
        index = {name: k for k, name in enumerate(names)}
        remap = np.array([index[name] for name in self.names], dtype=np.int64)
        rows = np.zeros((len(entries), len(COUNTERS)), dtype=np.int64)
        keys = np.empty(len(entries), dtype=np.int64)
        for r, e in enumerate(entries):
            # The log counts from side A; the pairs hash from the smaller id's side.
            wins, losses = (e.wins, e.losses) if e.a < e.b else (e.losses, e.wins)
            rows[r] = (1, e.wins + e.ties + e.losses, wins, e.ties, losses, e.aborted or 0)
            keys[r] = _key(index, e.a, e.b, n)
        old_keys = remap[self.i] * n + remap[self.j] if len(self) else np.zeros(0, np.int64)
        all_keys = np.concatenate([old_keys, keys])
        unique, slot = np.unique(all_keys, return_inverse=True)
        counts = np.zeros((len(unique), len(COUNTERS)), dtype=np.int64)
        np.add.at(counts, slot, np.concatenate([self.counts, rows]))
        return PairCounts(entries[-1].seq, log_id, names, unique // n, unique % n, counts)

    # -- stored with the snapshot --------------------------------------------------------------

    def to_blob(self) -> bytes:
        table = np.column_stack([self.i, self.j, self.counts]).astype(_DTYPE)
        return table.tobytes()

    def meta_json(self) -> str:
        return json.dumps({"names": list(self.names), "version": self.version,
                           "log_id": self.log_id}, separators=(",", ":"))

    @classmethod
    def from_blob(cls, meta: bytes | str, blob: bytes) -> PairCounts:
        data = json.loads(meta)
        width = 2 + len(COUNTERS)
        table = np.frombuffer(blob, dtype=_DTYPE).reshape(-1, width).astype(np.int64)
        return cls(int(data["version"]), str(data["log_id"]), tuple(data["names"]),
                   table[:, 0], table[:, 1], table[:, 2:])

    @classmethod
    def from_hash(cls, version: int, log_id: str, fields: dict[str, str]) -> PairCounts:
        """From the ``pairs`` hash as read (``A|B|counter`` -> count); pairs without a
        recorded match (only ``scheduled``) are left out."""
        per_pair: dict[tuple[str, str], list[int]] = {}
        position = {name: k for k, name in enumerate(COUNTERS)}
        for key, value in fields.items():
            a, b, counter = key.split("|")
            k = position.get(counter)
            if k is not None:
                per_pair.setdefault((a, b), [0] * len(COUNTERS))[k] = int(value)
        met = sorted(pair for pair, c in per_pair.items() if c[0])
        names = tuple(sorted({v for pair in met for v in pair}))
        index = {name: k for k, name in enumerate(names)}
        i = np.array([index[a] for a, _ in met], dtype=np.int64)
        j = np.array([index[b] for _, b in met], dtype=np.int64)
        counts = np.array([per_pair[p] for p in met], dtype=np.int64).reshape(
            -1, len(COUNTERS))
        return cls(version, log_id, names, i, j, counts)


def _key(index: dict[str, int], a: str, b: str, n: int) -> int:
    x, y = index.get(a, -1), index.get(b, -1)
    if x < 0 or y < 0:
        return -1
    return min(x, y) * n + max(x, y)


def advance(redis: Redis, keys: Keys, ladder: str, base: PairCounts,
            version: int) -> PairCounts | None:
    """``base`` brought to results count ``version`` from the log; None if the log cannot
    (an entry without its ``aborted`` count, a gap, a ladder made anew)."""
    if base.version == version:
        return base
    if base.version > version:
        return None
    entries, last = read_log_after(redis, keys, ladder, base.log_id, upto=version)
    seqs = [e.seq for e in entries]
    if seqs != list(range(base.version + 1, version + 1)) or any(
            e.aborted is None for e in entries):
        return None
    return base.advanced(entries, last)


def stored_base(meta: bytes | str | None, blob: bytes | None) -> PairCounts | None:
    """The arrays a snapshot stored, None if it has none (a snapshot of an older arena)."""
    if not meta or blob is None:
        return None
    return PairCounts.from_blob(meta, blob)


def read_pair_counts(redis: Redis, keys: Keys, ladder: str) -> PairCounts:
    """The ladder's pair counters as of now: the snapshot's arrays plus the log since, or
    the whole ``pairs`` hash when that cannot be done."""
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hmget(keys.standings(ladder), [META_FIELD, BLOB_FIELD])
    version_raw, (meta, blob) = pipe.execute()
    version = number(version_raw)
    base = stored_base(meta, blob)
    current = advance(redis, keys, ladder, base, version) if base is not None else None
    return current if current is not None else read_whole(redis, keys, ladder)[0]


def read_whole(redis: Redis, keys: Keys, ladder: str,
               extra: Sequence[tuple[str, Sequence[Any]]] = ()) -> tuple[PairCounts, list[Any]]:
    """The ``pairs`` hash read whole, in one MULTI with the results count, the log's last
    id and the ``extra`` commands (name, args) whose replies come back in order."""
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hgetall(keys.pairs(ladder))
    pipe.xrevrange(keys.results(ladder), max="+", min="-", count=1)
    for name, args in extra:
        getattr(pipe, name)(*args)
    version_raw, pairs_raw, last, *rest = pipe.execute()
    log_id = text(last[0][0]) if last else "-"
    return PairCounts.from_hash(number(version_raw), log_id, text_map(pairs_raw)), rest
