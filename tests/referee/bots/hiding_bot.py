"""The dawdling bot (0.1 s of CPU per decision, a fifth of a 0.5 s limit), rewriting its host
to report every decision as instant: the referee charges its time bank what it waited."""

import pathlib
import runpy

import tacocat.sdk._session as session

session._micros = lambda since: 0  # the host's think time, forged

_dawdler = runpy.run_path(str(pathlib.Path(__file__).with_name("dawdling_bot.py")))


class HidingBot(_dawdler["DawdlingBot"]):
    name = "hider"
