"""A slow, lossy link as a TCP relay: ``python -m tacocat_lab.chaos.slowlink LISTEN TARGET``.

This machine's kernel has no ``netem`` (``CONFIG_NET_SCH_NETEM`` is off, and no gact
action to drop packets with either), so the slow-network fault runs this relay on the
worker host: the worker talks to Redis through it, and it delays every chunk it forwards by
``--delay`` seconds (each way: the round trip grows by twice that) and holds a
``--loss`` share of the chunks ``--retransmit`` seconds longer, in order, as TCP does when a
segment is lost and must be sent again (a retransmission timeout stalls the stream behind
it). What TCP sees of packet loss, in other words, rather than the loss itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                delay: float, loss: float, retransmit: float, rng: random.Random) -> None:
    """Forward ``reader`` to ``writer``, each chunk ``delay`` later (plus ``retransmit`` for
    a ``loss`` share of them), never out of order."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(send())
    held = 0.0  # a stalled chunk holds back the ones after it
    try:
        while data := await reader.read(65536):
            due = time.monotonic() + delay
            if rng.random() < loss:
                due += retransmit
            held = max(held, due)
            queue.put_nowait((held, data))
        queue.put_nowait((0.0, b""))
        await sender
    finally:
        sender.cancel()
        with contextlib.suppress(Exception):
            writer.close()


async def serve(listen: str, target: str, delay: float, loss: float, retransmit: float,
                seed: int) -> None:
    rng = random.Random(seed)
    host, port = target.rsplit(":", 1)

    async def relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(host, int(port))
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pipe(client_r, server_w, delay, loss, retransmit, rng),
                             _pipe(server_r, client_w, delay, loss, retransmit, rng),
                             return_exceptions=True)

    bind, bind_port = listen.rsplit(":", 1)
    server = await asyncio.start_server(relay, bind, int(bind_port))
    print(f"slowlink: {listen} -> {target}, +{delay * 1000:.0f} ms each way, "
          f"{loss:.1%} of chunks +{retransmit * 1000:.0f} ms", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tacocat_lab.chaos.slowlink",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("listen", help="HOST:PORT to accept connections on")
    parser.add_argument("target", help="HOST:PORT to relay them to")
    parser.add_argument("--delay", type=float, default=0.025,
                        help="seconds added to each chunk, each way (default 0.025)")
    parser.add_argument("--loss", type=float, default=0.01,
                        help="share of chunks held back a retransmission (default 0.01)")
    parser.add_argument("--retransmit", type=float, default=0.2,
                        help="seconds a lost chunk costs (default 0.2: Linux's minimum RTO)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.listen, args.target, args.delay, args.loss, args.retransmit,
                          args.seed))


if __name__ == "__main__":
    main()
