#!/usr/bin/env python3
# Usage: python3 samples/apis.py > samples/apis.http
# Builds samples/apis.http: API responses in the formats past AFNetworking's four (forms, multipart, event streams,
# JSON Lines, MessagePack, CBOR, protobuf and gRPC-Web, OpenStep property lists), as a proxy capture holds them.
# The binary encodings are written out here by hand, from the formats' specifications, so that nothing but Python's
# standard library is needed.
import json
import struct
import sys


def response(status, reason, ctype, body, extra=b""):
    head = f"HTTP/1.1 {status} {reason}\r\n".encode()
    if ctype is not None:
        head += f"Content-Type: {ctype}\r\n".encode()
    head += extra + f"Content-Length: {len(body)}\r\n\r\n".encode()
    return head + body


def msgpack(v):
    if v is None: return b"\xc0"
    if v is True: return b"\xc3"
    if v is False: return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128: return bytes([v])
        if -32 <= v < 0: return struct.pack("b", v)
        if 0 <= v < 2**16: return b"\xcd" + struct.pack(">H", v)
        if 0 <= v < 2**32: return b"\xce" + struct.pack(">I", v)
        if 0 <= v < 2**64: return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float): return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b
    if isinstance(v, bytes): return b"\xc4" + bytes([len(v)]) + v
    if isinstance(v, list): return bytes([0x90 | len(v)]) + b"".join(map(msgpack, v))
    if isinstance(v, dict): return bytes([0x80 | len(v)]) + b"".join(msgpack(k) + msgpack(x) for k, x in v.items())
    if isinstance(v, tuple) and v[0] == "timestamp32": return b"\xd6\xff" + struct.pack(">I", v[1])
    raise TypeError(v)


def cbor_head(major, n):
    if n < 24: return bytes([major << 5 | n])
    if n < 256: return bytes([major << 5 | 24, n])
    if n < 65536: return bytes([major << 5 | 25]) + struct.pack(">H", n)
    if n < 2**32: return bytes([major << 5 | 26]) + struct.pack(">I", n)
    return bytes([major << 5 | 27]) + struct.pack(">Q", n)


def cbor(v):
    if v is None: return b"\xf6"
    if v is True: return b"\xf5"
    if v is False: return b"\xf4"
    if isinstance(v, int): return cbor_head(0, v) if v >= 0 else cbor_head(1, -1 - v)
    if isinstance(v, float): return b"\xfb" + struct.pack(">d", v)
    if isinstance(v, str): return cbor_head(3, len(v.encode())) + v.encode()
    if isinstance(v, bytes): return cbor_head(2, len(v)) + v
    if isinstance(v, list): return cbor_head(4, len(v)) + b"".join(map(cbor, v))
    if isinstance(v, dict): return cbor_head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v.items())
    if isinstance(v, tuple) and v[0] == "tag": return cbor_head(6, v[1]) + cbor(v[2])
    raise TypeError(v)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_field(number, value):
    if isinstance(value, int): return varint(number << 3 | 0) + varint(value)
    if isinstance(value, float): return varint(number << 3 | 1) + struct.pack("<d", value)
    if isinstance(value, str): value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


records = []
# 1. An OAuth token endpoint answering in a form (GitHub's access-token response without an Accept header).
records.append(response(200, "OK", "application/x-www-form-urlencoded",
                        b"access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&scope=repo%2Cgist&token_type=bearer"))
# 2. A batch API's multipart/mixed answer: a JSON part and a plain text part, with a preamble.
records.append(response(200, "OK", 'multipart/mixed; boundary="batch_7Ab:c=d"', (
    "This is a multi-part message.\r\n"
    "--batch_7Ab:c=d\r\nContent-Type: application/json\r\nContent-ID: <response-1>\r\n\r\n"
    '{"id": 1, "name": "Ada", "email": null}\r\n'
    "--batch_7Ab:c=d\r\nContent-Type: text/plain; charset=utf-8\r\nContent-ID: <response-2>\r\n\r\n"
    "quota: 98 left\r\n"
    "--batch_7Ab:c=d--\r\n").encode()))
# 3. A 206 with two byte ranges of a text file.
records.append(response(206, "Partial Content", "multipart/byteranges; boundary=3d6b6a416f9b5", (
    "--3d6b6a416f9b5\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-11/90\r\n\r\n"
    'Release note\r\n'
    "--3d6b6a416f9b5\r\nContent-Type: text/plain\r\nContent-Range: bytes 80-89/90\r\n\r\n"
    'end of log\r\n'
    "--3d6b6a416f9b5--\r\n").encode()))
# 4. An OpenAI-style chat completion stream: JSON chunks, then [DONE].
chunks = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [
    {"index": 0, "delta": delta, "finish_reason": reason}]} for delta, reason in
    [({"role": "assistant", "content": ""}, None), ({"content": "Hello"}, None), ({"content": "!"}, None), ({}, "stop")]]
records.append(response(200, "OK", "text/event-stream; charset=utf-8",
                        "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"))
# 5. An Anthropic-style messages stream: named events, a ping, a comment.
events = [("message_start", {"type": "message_start", "message": {"id": "msg_1", "role": "assistant"}}),
          ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": "Hi there"}}),
          ("ping", {"type": "ping"}),
          ("message_stop", {"type": "message_stop"})]
records.append(response(200, "OK", "text/event-stream", b": keep-alive\r\n" + "".join(
    f"event: {name}\r\ndata: {json.dumps(data)}\r\n\r\n" for name, data in events).encode()))
# 6. A streamed JSON Lines answer (a model server's progress lines).
records.append(response(200, "OK", "application/x-ndjson", b"".join(
    json.dumps(line).encode() + b"\n" for line in
    [{"status": "pulling manifest"}, {"status": "downloading", "completed": 512, "total": 2048},
     {"status": "success"}])))
# 7. MessagePack: a map with a binary value, a negative integer, a float, a timestamp extension and a non-string key.
records.append(response(200, "OK", "application/msgpack", msgpack(
    {"user": "ada", "id": 18446744073709551615, "delta": -7, "score": 0.5, "avatar": b"\x89PNG",
     "seen": ("timestamp32", 1700000000), 1: ["one"], "tags": ["a", None]})))
# 8. CBOR: a map with a date tag, a bignum tag and binary data (RFC 8949 §3.4).
records.append(response(200, "OK", "application/cbor", cbor(
    {"sensor": "t-17", "at": ("tag", 0, "2026-11-26T08:00:00Z"), "readings": [21.5, 21.75],
     "serial": ("tag", 2, b"\x01\x00\x00\x00\x00\x00\x00\x00\x00"), "raw": b"\x00\x01"})))
# 9. A protobuf message (no schema): a string, a varint, a nested message, a double.
inner = pb_field(1, "Ada") + pb_field(2, 36)
records.append(response(200, "OK", "application/x-protobuf",
                        pb_field(1, 150) + pb_field(2, "hello") + pb_field(3, inner) + pb_field(4, 2.5)))
# 10. gRPC-Web: one message frame and the trailer frame with grpc-status.
message = pb_field(1, "pong") + pb_field(2, 7)
trailer = b"grpc-status: 0\r\ngrpc-message: OK\r\n"
records.append(response(200, "OK", "application/grpc-web+proto",
                        b"\x00" + struct.pack(">I", len(message)) + message
                        + b"\x80" + struct.pack(">I", len(trailer)) + trailer))
# 11. An OpenStep property list, as NSPropertyListSerialization reads it.
records.append(response(200, "OK", "application/x-plist",
                        b'{\n  name = "Ada";\n  langs = (swift, "objective-c");\n  data = <0fbd7771>;\n}\n'))
sys.stdout.buffer.write(b"".join(records))
