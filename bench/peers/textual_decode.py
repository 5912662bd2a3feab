#!/usr/bin/env python3
"""The peers' whole job for bench/form/run, bench/sse/run and bench/ndjson/run: read an HTTP stream of 200
responses, frame it by Content-Length, decode each body with the named peer and write one JSON line (orjson) per
body, as respdecode writes one line per record.

    textual_decode.py FORMAT PEER STREAM      FORMAT: form, sse or ndjson; PEER: see DECODERS
"""
import sys

import orjson

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from textual_peers import DECODERS  # noqa: E402


def responses(data):
    position = 0
    while position < len(data):
        end = data.index(b"\r\n\r\n", position)
        head = data[position:end].decode("latin-1").split("\r\n")
        length = next(int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:"))
        yield data[end + 4:end + 4 + length]
        position = end + 4 + length


def main():
    fmt, peer, stream = sys.argv[1:4]
    decode = DECODERS[fmt][peer]
    with open(stream, "rb") as f:
        data = f.read()
    out = sys.stdout.buffer
    for body in responses(data):
        out.write(orjson.dumps(decode(body)))
        out.write(b"\n")


if __name__ == "__main__":
    main()
