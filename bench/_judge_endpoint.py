"""A minimal OpenAI-compatible chat endpoint on asyncio for the judge benchmark: every
``POST .../chat/completions`` is answered after ``--latency`` seconds with a fixed JSON
verdict. Lighter than the tests' threaded server, so the 50 ms it promises are close to the
50 ms a client sees (its own overhead would otherwise count against the client). Prints its
base URL, then serves until stdin closes."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

BODY = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench-judge",
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                       "role": "assistant", "content": '{"score": 4, "reasoning": "fine"}', "refusal": None}}],
                   "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}).encode()
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(BODY)).encode()
        + b"\r\n\r\n")


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            await asyncio.sleep(latency)
            writer.write(HEAD + BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(latency: float) -> None:
    server = await asyncio.start_server(lambda r, w: serve(r, w, latency), "127.0.0.1", 0, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
    server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.05)
    asyncio.run(main(parser.parse_args().latency))
