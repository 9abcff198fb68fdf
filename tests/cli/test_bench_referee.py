"""``tacocat bench referee``'s pieces that run in this process: the message sizes its echo
baseline sends are measured by playing real games through the (compiled) referee loop."""

from __future__ import annotations

from tacocat_lab.bench.echo import message_sizes


def test_the_echo_baseline_sends_messages_of_the_protocols_measured_sizes() -> None:
    request_bytes, action_bytes = message_sizes(games=4)
    # A decision request carries an observation's changes; an action, an id and a few cards.
    assert 20 < request_bytes < 400
    assert 4 < action_bytes < request_bytes
