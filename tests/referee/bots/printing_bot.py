"""Prints on every decision: the host must keep this off the protocol's stdout."""

import os
import sys

from tacocat.engine.bots import GreedyBot


class PrintingBot(GreedyBot):
    name = "printer"

    def duel(self, obs):
        print("thinking about the duel...", obs.hand)
        sys.stdout.write("more noise\n")
        sys.stdout.flush()
        sys.stdout.buffer.write(b"bytes via sys.stdout.buffer\n")
        sys.stderr.reconfigure(line_buffering=True)  # what a real stream offers still works
        os.write(1, b"\x00\x00\x00\x05raw bytes on fd 1\n")
        return super().duel(obs)
