"""The Redis key schema: every key the arena reads or writes is named here, and only here.

All keys start with a configurable prefix (``tacocat:`` by default), so one Redis can hold
several arenas, or an arena next to RQ's ``rq:`` keys. Keys that belong to one ladder, and
the keys of that ladder's matches, carry the ladder's name as a hash tag (``{main}``): the
recording script touches only keys of one ladder, so on Redis Cluster they share a slot.
docs/ARENA.md lists the schema with the type and fields of every key.
"""

from __future__ import annotations

from typing import Final

DEFAULT_PREFIX: Final = "tacocat:"


class Keys:
    """Key names under one prefix. Immutable and cheap; make one per arena."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        if not prefix or any(c.isspace() for c in prefix):
            raise ValueError(
                f"key prefix {prefix!r} must be non-empty and without whitespace, e.g. "
                f"{DEFAULT_PREFIX!r}"
            )
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"Keys({self.prefix!r})"

    # -- users and tokens ----------------------------------------------------------------------

    @property
    def users(self) -> str:
        """Set of user names."""
        return f"{self.prefix}users"

    def user(self, name: str) -> str:
        """Hash: name, admin ("1"/"0"), created_at."""
        return f"{self.prefix}user:{name}"

    def user_tokens(self, name: str) -> str:
        """Set of the sha256 digests of the user's tokens."""
        return f"{self.prefix}user:{name}:tokens"

    def token(self, digest: str) -> str:
        """Hash: digest, user, label, created_at. The plaintext token is never stored."""
        return f"{self.prefix}token:{digest}"

    @property
    def bootstrap(self) -> str:
        """String: set once the admin user and its first token were created."""
        return f"{self.prefix}bootstrap"

    # -- bots and versions ---------------------------------------------------------------------

    @property
    def bots(self) -> str:
        """Set of bot ids (``owner/name``)."""
        return f"{self.prefix}bots"

    def user_bots(self, name: str) -> str:
        """Set of the ids of the bots this user owns."""
        return f"{self.prefix}user:{name}:bots"

    def bot(self, bot_id: str) -> str:
        """Hash: id, owner, name, created_at, versions (count), current (newest active, 0)."""
        return f"{self.prefix}bot:{bot_id}"

    def bot_digests(self, bot_id: str) -> str:
        """Hash: sha256 of a pending or active version's upload -> its number (dedup)."""
        return f"{self.prefix}bot:{bot_id}:sha256"

    def bot_ladders(self, bot_id: str) -> str:
        """Set of the ladders this bot joined."""
        return f"{self.prefix}bot:{bot_id}:ladders"

    def version(self, version_id: str) -> str:
        """Hash: the :class:`~tacocat.models.BotVersion` fields."""
        return f"{self.prefix}version:{version_id}"

    def version_source(self, version_id: str) -> str:
        """String: the uploaded bytes (a .py file or a zip)."""
        return f"{self.prefix}version:{version_id}:source"

    def version_build(self, version_id: str) -> str:
        """String: the built bot folder (a tar) of a version with a build step, made once by
        a worker (``bot.toml``'s ``build``)."""
        return f"{self.prefix}version:{version_id}:build"

    def version_build_log(self, version_id: str) -> str:
        """String: what that build printed, for the version's owner."""
        return f"{self.prefix}version:{version_id}:build-log"

    @property
    def pending_versions(self) -> str:
        """Sorted set: versions awaiting their smoke game, by submission time."""
        return f"{self.prefix}versions:pending"

    @property
    def smoke_dispatched(self) -> str:
        """Hash: pending version id -> when its smoke test was last handed out."""
        return f"{self.prefix}dispatch:smoke"

    @property
    def ticks(self) -> str:
        """Set: ladder names (or ``*``) whose scheduling is due; the dispatcher empties it."""
        return f"{self.prefix}dispatch:ticks"

    @property
    def wake(self) -> str:
        """List of at most one element: wakes a dispatcher blocked on it (BLPOP)."""
        return f"{self.prefix}dispatch:wake"

    # -- ladders -------------------------------------------------------------------------------

    @property
    def ladders(self) -> str:
        """Set of ladder names."""
        return f"{self.prefix}ladders"

    def ladder(self, name: str) -> str:
        """Hash: the :class:`~tacocat.models.Ladder` fields plus its seed secret."""
        return f"{self.prefix}ladder:{{{name}}}"

    def entries(self, name: str) -> str:
        """Sorted set: bot ids that joined the ladder, by join time."""
        return f"{self.prefix}ladder:{{{name}}}:entries"

    def matches(self, name: str) -> str:
        """Sorted set: every match id of the ladder, by creation time."""
        return f"{self.prefix}ladder:{{{name}}}:matches"

    def pending(self, name: str) -> str:
        """Sorted set: scheduled, unrecorded, uncancelled match ids, by last enqueue time."""
        return f"{self.prefix}ladder:{{{name}}}:pending"

    def results(self, name: str) -> str:
        """Stream: one entry per recorded match, in commit order (the results log)."""
        return f"{self.prefix}ladder:{{{name}}}:results"

    def elo(self, name: str) -> str:
        """Hash: version id -> live Elo (``repr`` of the float, exact)."""
        return f"{self.prefix}ladder:{{{name}}}:elo"

    def stats(self, name: str) -> str:
        """Hash: ``VERSION|counter`` -> count (games, wins, forfeit:timeout, ...)."""
        return f"{self.prefix}ladder:{{{name}}}:stats"

    def pairs(self, name: str) -> str:
        """Hash: ``A|B|counter`` -> count, A < B, from A's side (wins, losses, ...)."""
        return f"{self.prefix}ladder:{{{name}}}:pairs"

    def counters(self, name: str) -> str:
        """Hash: results (the ladder version), games, created, cancelled."""
        return f"{self.prefix}ladder:{{{name}}}:counters"

    def standings(self, name: str) -> str:
        """Hash: version, board (the leaderboard snapshot as JSON, without the crosstable),
        pairs / pairs_meta / pairs_fit_los (the crosstable as arrays, see
        :mod:`~tacocat.arena.paircounts`), ratings (JSON: version -> [rating, margin], what
        the scheduler and the next refit's warm start read). An older arena kept the whole
        snapshot in ``data``; it is read while there and deleted by the next store."""
        return f"{self.prefix}ladder:{{{name}}}:standings"

    def refitting(self, name: str) -> str:
        """String with a TTL: held by the process refitting the ladder's standings now."""
        return f"{self.prefix}ladder:{{{name}}}:refitting"

    def served(self, name: str) -> str:
        """Hash: version -> the scheduling round of its last created match (fairness)."""
        return f"{self.prefix}ladder:{{{name}}}:served"

    def events(self, name: str) -> str:
        """Pub/sub channel: JSON change notifications for the ladder."""
        return f"{self.prefix}ladder:{{{name}}}:events"

    # -- rate limits ---------------------------------------------------------------------------

    def rate_limit(self, kind: str, subject: str) -> str:
        """Hash: tokens, at (a token bucket; expires once full again)."""
        return f"{self.prefix}ratelimit:{kind}:{subject}"

    # -- matches -------------------------------------------------------------------------------

    def match(self, ladder: str, match_id: str) -> str:
        """Hash: the :class:`~tacocat.models.Match` fields and its result as JSON."""
        return f"{self.prefix}match:{{{ladder}}}:{match_id}"

    def match_replays(self, ladder: str, match_id: str) -> str:
        """String: gzip-compressed JSON Lines, one replay record per game."""
        return f"{self.prefix}match:{{{ladder}}}:{match_id}:replays"

    def match_logs(self, ladder: str, match_id: str, side: str) -> str:
        """String: what side ``a`` or ``b``'s bot wrote to stderr, gzip-compressed (its
        owner's only: :mod:`tacocat.arena.logs`)."""
        return f"{self.prefix}match:{{{ladder}}}:{match_id}:logs:{side}"

    def log_link_secret(self) -> str:
        """String: the HMAC key of signed links to bot logs (made on first use)."""
        return f"{self.prefix}secret:log-links"

    # -- matches being played (short-lived: see tacocat.arena.live) ----------------------------

    def live_matches(self, ladder: str) -> str:
        """Sorted set: the ladder's matches being played now, scored by start time."""
        return f"{self.prefix}ladder:{{{ladder}}}:live"

    def live_match(self, ladder: str, match_id: str) -> str:
        """Hash: a running match's worker, started_at, games (played so far)."""
        return f"{self.prefix}match:{{{ladder}}}:{match_id}:live"

    def live_games(self, ladder: str, match_id: str) -> str:
        """List: the replay records (JSON) of a running match's finished games, in order."""
        return f"{self.prefix}match:{{{ladder}}}:{match_id}:live-games"


DEFAULT_KEYS: Final = Keys()
