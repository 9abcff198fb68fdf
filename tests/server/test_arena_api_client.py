"""The arena client's local rules: where the token comes from (and where it never goes), the
default bot name, and the errors of an unreachable server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat.sdk import ArenaClient, SdkError, ServerUnavailableError
from tacocat.sdk.arena import bot_name_for, find_token, is_local_address


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_token_sources_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    local = tmp_path / ".tacocat" / "data" / "admin.token"
    local.parent.mkdir(parents=True)
    local.write_text("tct_local\n")
    named = tmp_path / "mine.token"
    named.write_text("tct_file\n")
    assert find_token("localhost:50051") == ("tct_local", ".tacocat/data/admin.token")
    monkeypatch.setenv("TACOCAT_TOKEN_FILE", str(named))
    assert find_token("localhost:50051") == ("tct_file", str(named))
    monkeypatch.setenv("TACOCAT_TOKEN", "tct_env")
    assert find_token("localhost:50051") == ("tct_env", "$TACOCAT_TOKEN")
    assert find_token("localhost:50051", "tct_arg") == ("tct_arg", "the token argument")


def test_a_token_given_empty_is_an_error_not_the_admin_token(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    local = tmp_path / ".tacocat" / "data" / "admin.token"
    local.parent.mkdir(parents=True)
    local.write_text("tct_local\n")
    with pytest.raises(SdkError, match="the token given is empty"):
        find_token("localhost:50051", " ")
    empty = tmp_path / "empty.token"
    empty.write_text("\n")
    with pytest.raises(SdkError, match=r"empty\.token' is empty"):
        find_token("localhost:50051", token_file=empty)
    monkeypatch.setenv("TACOCAT_TOKEN", "")
    with pytest.raises(SdkError, match=r"\$TACOCAT_TOKEN is set but empty"):
        find_token("localhost:50051")
    assert find_token("localhost:50051", "tct_arg") == ("tct_arg", "the token argument")


def test_the_local_admin_token_never_goes_to_another_machine(tmp_path: Path) -> None:
    local = tmp_path / ".tacocat" / "data" / "admin.token"
    local.parent.mkdir(parents=True)
    local.write_text("tct_local\n")
    for address in ("localhost:1", "127.0.0.1:1", "[::1]:1", "127.1.2.3:1", "unix:/tmp/s"):
        assert is_local_address(address), address
        assert find_token(address)[0] == "tct_local"
    for address in ("arena.example.com:50051", "10.0.0.5:50051", "[2001:db8::1]:1"):
        assert not is_local_address(address), address
        assert find_token(address) == (None, None)


def test_a_named_token_file_must_be_readable(tmp_path: Path) -> None:
    with pytest.raises(SdkError, match="cannot read the token file"):
        find_token("localhost:1", token_file=tmp_path / "missing.token")


def test_default_bot_names(tmp_path: Path) -> None:
    assert bot_name_for(Path("My Bot.py")) == "my-bot"
    assert bot_name_for(Path("dist/TacoBot_v2.zip")) == "tacobot_v2"
    folder = tmp_path / "clever"
    folder.mkdir()
    assert bot_name_for(folder / "bot.py") == "clever"
    assert bot_name_for(Path("___.py")) == "bot"


def test_an_unreachable_server_is_named() -> None:
    with ArenaClient("127.0.0.1:1", timeout=2.0) as client, \
            pytest.raises(ServerUnavailableError, match=r"cannot reach the arena server at "
                                                        r"127\.0\.0\.1:1") as caught:
        client.list_bots()
    assert caught.value.status == "UNAVAILABLE"
