"""The account commands: ``tacocat token`` (create, list, revoke) and ``tacocat user``
(create, register, whoami), thin wrappers over :class:`tacocat.sdk.ArenaClient` with the
arena commands' connection flags."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tacocat.sdk.arena import ArenaClient

from ._arena_cmds import command, when
from ._output import table

if TYPE_CHECKING:
    Sub = argparse._SubParsersAction[argparse.ArgumentParser]


def add_parsers(sub: Sub) -> None:
    add_token(sub)
    add_user(sub)


# ------------------------------------------------------------------------------- tokens, users


def add_token(sub: Sub) -> None:
    p = sub.add_parser("token", help="create and list tokens",
                       description="API tokens (tct_...): send one with --token or "
                                   "TACOCAT_TOKEN.\n\nexamples:\n  tacocat token create --user"
                                   " alice --label laptop\n  tacocat token list\n",
                       formatter_class=argparse.RawTextHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = command(actions, "create", "create a token", """\
Create a token for yourself, or (admins) for another user. The token is printed once, alone
on stdout (so `export TACOCAT_TOKEN=$(tacocat token create)` works); it is stored hashed
and cannot be shown again.

examples:
  tacocat token create --user alice --label laptop
  export TACOCAT_TOKEN=$(tacocat token create --label ci)
""", _token_create)
    create.add_argument("--user", help="whose token (default: yours; others' need an admin)")
    create.add_argument("--label", default="", help="a note to tell tokens apart")
    lst = command(actions, "list", "list tokens (never their plaintext)", """\
List your tokens (admins: --user anyone's) by id, label and creation time.

example:
  tacocat token list
""", _token_list)
    lst.add_argument("--user", help="whose tokens (default: yours)")
    revoke = command(actions, "revoke", "revoke a token", """\
Revoke a token by its id (from `tacocat token list`).

example:
  tacocat token revoke 3f9a0c1e5b7d2468
""", _token_revoke)
    revoke.add_argument("id", metavar="TOKEN_ID")
    revoke.add_argument("--user", help="whose token (default: yours)")


def _token_create(args: argparse.Namespace, client: ArenaClient) -> int:
    made = client.create_token(args.user, label=args.label)
    print(f"token for {made.info.user} (id {made.info.id}); shown once, keep it secret:",
          file=sys.stderr)
    print(made.token)
    return 0


def _token_list(args: argparse.Namespace, client: ArenaClient) -> int:
    tokens = client.list_tokens(args.user)
    print(table(["id", "user", "label", "created"],
                [[t.id, t.user, t.label, when(t.created_at)] for t in tokens], align="llll"))
    return 0


def _token_revoke(args: argparse.Namespace, client: ArenaClient) -> int:
    client.revoke_token(args.id, args.user)
    print(f"revoked token {args.id}")
    return 0


def add_user(sub: Sub) -> None:
    p = sub.add_parser("user", help="create users (admins), register, show who you are",
                       description="Users own bots and tokens.\n\nexamples:\n  tacocat user "
                                   "create alice\n  tacocat user register bob   # open "
                                   "arenas\n  tacocat user whoami\n",
                       formatter_class=argparse.RawTextHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = command(actions, "create", "create a user (admins)", """\
Create a user (admins only), then give them a token with `tacocat token create --user NAME`.

examples:
  tacocat user create alice
  tacocat user create bob --admin
""", _user_create)
    create.add_argument("name", metavar="NAME", help="1-40 of [a-z0-9_-]")
    create.add_argument("--admin", action="store_true", help="may create users and ladders")
    register = command(actions, "register", "make yourself a user (open arenas)", """\
Make yourself a user and its first token, without an admin, on an arena whose server runs
with --open-registration (a few registrations per IP per hour). The token is printed once,
alone on stdout, so this works:

example:
  export TACOCAT_TOKEN=$(tacocat user register alice --server arena.example.org:50051)
""", _user_register)
    register.add_argument("name", metavar="NAME", help="1-40 of [a-z0-9_-]")
    register.add_argument("--label", default="", help="a note for the token (default none)")
    command(actions, "whoami", "the user your token belongs to", """\
Show the user your token belongs to.

example:
  TACOCAT_TOKEN=tct_... tacocat user whoami
""", _user_whoami)


def _user_create(args: argparse.Namespace, client: ArenaClient) -> int:
    user = client.create_user(args.name, admin=args.admin)
    print(f"created {'admin ' if user.admin else ''}user {user.name}; give them a token: "
          f"tacocat token create --user {user.name}")
    return 0


def _user_register(args: argparse.Namespace, client: ArenaClient) -> int:
    made = client.register(args.name, label=args.label)
    print(f"registered user {made.info.user}; its token (id {made.info.id}), shown once, "
          "keep it secret:", file=sys.stderr)
    print(made.token)
    return 0


def _user_whoami(args: argparse.Namespace, client: ArenaClient) -> int:
    user = client.whoami()
    print(f"{user.name}{' (admin)' if user.admin else ''}, token from {client.token_source}")
    return 0
