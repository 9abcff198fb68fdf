"""The house bots as user bots in a ladder, owned by the user ``house``: what `tacocat up`
submits, and what `tacocat ladder create` enters unless --no-house."""

from __future__ import annotations

import contextlib
import hashlib
from typing import Final

from tacocat.engine import HOUSE_BOTS
from tacocat.sdk import Tls
from tacocat.sdk.arena import AlreadyExistsError, ArenaClient, NotFoundError, VersionStatus

HOUSE_USER: Final = "house"
HOUSE_DEMO_BOTS: Final = ("random", "greedy", "strong")


def add_house_bots(admin: ArenaClient, ladder: str, tls: Tls | None) -> list[str]:
    """Enter the house bots in ``ladder`` as the user ``house`` (created if missing), the
    way `tacocat up` does, through a token made for this and revoked right after."""
    with contextlib.suppress(AlreadyExistsError):
        admin.create_user(HOUSE_USER)
    made = admin.create_token(HOUSE_USER, label=f"house bots for ladder {ladder}")
    try:
        with ArenaClient(admin.address, made.token, tls=tls) as house:
            return submit_house_bots(house, ladder)
    finally:
        admin.revoke_token(made.info.id, HOUSE_USER)


def house_source(name: str) -> bytes:
    """A bot file that plays house bot ``name``: what `tacocat up` submits."""
    return (
        f'"""The house bot {name!r}, submitted as a user bot by `tacocat up`."""\n\n'
        "from tacocat.engine import house_bot\n\n"
        f"_House = type(house_bot({name!r}))\n\n\n"
        "class HouseBot(_House):  # type: ignore[misc, valid-type]\n"
        f'    """House bot {name}, unchanged."""\n'
    ).encode()


def submit_house_bots(client: ArenaClient, ladder: str) -> list[str]:
    """Submit each house bot unless this very code is already in (pending or active), and
    make sure each is in ``ladder``; the version ids that should play."""
    wanted = [name for name in HOUSE_DEMO_BOTS if name in HOUSE_BOTS]
    versions: list[str] = []
    for name in wanted:
        source = house_source(name)
        digest = hashlib.sha256(source).hexdigest()
        try:
            existing = client.list_versions(f"{HOUSE_USER}/{name}")
        except NotFoundError:
            existing = []
        same = [v for v in existing
                if v.sha256 == digest and v.status is not VersionStatus.REJECTED]
        if same:
            versions.append(same[-1].id)
            with contextlib.suppress(AlreadyExistsError):
                client.join(ladder, name)
            continue
        done = client.submit_bytes(f"{name}.py", source, name, ladder)
        versions.append(done.version.id)
    print(f"house bots: {', '.join(versions)}", flush=True)
    return versions
