#!/usr/bin/env python3
"""The Python peer of bench/msgpack/run and bench/cbor/run: decodes each body of a bodies file (a 4-byte big-endian
length before each body) with msgpack's or cbor2's C extension and writes it as one JSON line with orjson, as
respdecode writes a value: bytes as {"base64": ...}, non-string keys as strings (orjson's OPT_NON_STR_KEYS),
timestamps and dates as ISO 8601, other extensions and tags as objects.

    binary_decode.py msgpack|cbor BODIES > /dev/null
"""
import base64
import datetime
import sys

import orjson


def default(value):
    if isinstance(value, (bytes, bytearray)):
        return {"base64": base64.b64encode(value).decode()}
    if hasattr(value, "code") and hasattr(value, "data"):  # msgpack.ExtType
        return {"ext": value.code, "base64": base64.b64encode(value.data).decode()}
    if hasattr(value, "tag") and hasattr(value, "value"):  # cbor2.CBORTag
        return {"tag": value.tag, "value": value.value}
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if hasattr(value, "to_datetime"):  # msgpack.Timestamp
        return value.to_datetime().isoformat()
    raise TypeError(type(value))


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "msgpack":
        import msgpack

        def loads(body):
            return msgpack.unpackb(body, raw=False, strict_map_key=False, timestamp=3)
    else:
        import cbor2

        loads = cbor2.loads
    options = orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    with open(path, "rb") as f:
        data = f.read()
    out = sys.stdout.buffer
    chunks = []
    i = 0
    n = len(data)
    while i < n:
        length = int.from_bytes(data[i:i + 4], "big")
        body = data[i + 4:i + 4 + length]
        i += 4 + length
        chunks.append(orjson.dumps(loads(body), default=default, option=options))
        if len(chunks) >= 1000:
            out.write(b"".join(chunks))
            chunks.clear()
    out.write(b"".join(chunks))


main()
