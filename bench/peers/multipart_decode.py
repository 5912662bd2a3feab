#!/usr/bin/env python3
"""A Python peer of respdecode's multipart decoder, for bench/multipart/run: reads a file of bodies (each
`<content-type>\\n<length>\\n<body>`), splits each with PEER, undoes base64 and quoted-printable transfer encodings,
parses the JSON parts with json.loads, and prints one line per body (its part count).

    multipart_decode.py PEER FILE        PEER: python-multipart (any multipart), multipart or streaming-form-data
                                         (multipart/form-data only: they need a Content-Disposition name)
"""
import binascii
import json
import quopri
import sys


def boundary_of(content_type):
    for param in content_type.split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.lower() == "boundary":
            return value.strip('"')
    raise ValueError("no boundary")


def finish(headers, data):
    """The part's content as respdecode decodes it: transfer encoding undone, JSON parsed."""
    encoding = headers.get("content-transfer-encoding", "").lower()
    if encoding == "base64":
        data = binascii.a2b_base64(data)
    elif encoding == "quoted-printable":
        data = quopri.decodestring(data)
    if headers.get("content-type", "").split(";")[0].strip().lower() == "application/json":
        return json.loads(data)
    return data


def python_multipart(body, content_type):
    import python_multipart

    parts = []
    state = {"field": [], "value": [], "headers": {}, "data": []}

    def on_part_begin():
        state["headers"] = {}
        state["data"] = []

    def on_header_field(d, s, e):
        state["field"].append(d[s:e])

    def on_header_value(d, s, e):
        state["value"].append(d[s:e])

    def on_header_end():
        state["headers"][b"".join(state["field"]).decode("latin-1").lower()] = b"".join(state["value"]).decode("latin-1")
        state["field"], state["value"] = [], []

    def on_part_data(d, s, e):
        state["data"].append(d[s:e])

    def on_part_end():
        parts.append(finish(state["headers"], b"".join(state["data"])))

    parser = python_multipart.MultipartParser(boundary_of(content_type), callbacks={
        "on_part_begin": on_part_begin, "on_header_field": on_header_field, "on_header_value": on_header_value,
        "on_header_end": on_header_end, "on_part_data": on_part_data, "on_part_end": on_part_end})
    parser.write(body)
    parser.finalize()
    return parts


def defnull_multipart(body, content_type):
    import multipart

    parts = []
    parser = multipart.PushMultipartParser(boundary_of(content_type).encode())
    current, data = None, []
    for event in list(parser.parse(body)) + list(parser.parse(b"")):
        if isinstance(event, multipart.MultipartSegment):
            current, data = event, []
        elif event is None:
            headers = {name.lower(): value for name, value in current.headerlist}
            parts.append(finish(headers, b"".join(data)))
        elif event:
            data.append(event)
    return parts


def streaming_form_data(body, content_type):
    from streaming_form_data import StreamingFormDataParser
    from streaming_form_data.targets import ValueTarget

    parser = StreamingFormDataParser(headers={"Content-Type": content_type})
    targets = {}
    # The field names must be known beforehand: the bench's forms use these.
    for name in ("title", "description", "tags", "visibility", "meta", "file", "thumbnail", "csrf"):
        targets[name] = ValueTarget()
        parser.register(name, targets[name])
    parser.data_received(body)
    parts = []
    for name, target in targets.items():
        if target.value:
            parts.append(json.loads(target.value) if name == "meta" else target.value)
    return parts


def main():
    peer, path = sys.argv[1], sys.argv[2]
    split = {"python-multipart": python_multipart, "multipart": defnull_multipart,
             "streaming-form-data": streaming_form_data}[peer]
    out = []
    with open(path, "rb") as f:
        while True:
            content_type = f.readline()
            if not content_type:
                break
            length = int(f.readline())
            body = f.read(length)
            out.append(str(len(split(body, content_type.decode().strip()))))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
