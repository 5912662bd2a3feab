"""The peers of bench/form/run, bench/sse/run and bench/ndjson/run: each a function of one body that returns what
respdecode's value holds (forms grouped by name, events with their data read as JSON when it is, NDJSON values)."""
import urllib.parse

import orjson


def form_parse_qsl(body):
    # As WHATWG's parser does (the corpora's PROVENANCE.md checked all 35 WPT cases): UTF-8 with replacement.
    grouped = {}
    for name, value in urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True,
                                              errors="replace"):
        grouped.setdefault(name, []).append(value)
    return grouped


def form_fast_query_parsers(body):
    import fast_query_parsers

    grouped = {}
    for name, value in fast_query_parsers.parse_query_string(body, "&"):
        grouped.setdefault(name, []).append(value)
    return grouped


def json_or_text(data):
    try:
        return {"data": orjson.loads(data)}
    except orjson.JSONDecodeError:
        return {"text": data}


def sse_sseclient(body):
    import sseclient

    events = []
    for event in sseclient.SSEClient([body]).events():
        item = {"event": event.event or "message"}
        item.update(json_or_text(event.data))
        if event.id:
            item["id"] = event.id
        events.append(item)
    return {"events": events}


def sse_httpx_sse(body):
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    decoder = SSEDecoder()
    lines = SSELineDecoder()
    events = []
    for line in lines.decode(body.decode("utf-8", "replace")):
        event = decoder.decode(line)
        if event is not None:
            item = {"event": event.event}
            item.update(json_or_text(event.data))
            if event.id:
                item["id"] = event.id
            events.append(item)
    return {"events": events}


def ndjson_orjson(body):
    return [orjson.loads(line) for line in body.split(b"\n") if line.strip()]


DECODERS = {
    "form": {
        "urllib.parse.parse_qsl": form_parse_qsl,
        "fast-query-parsers": form_fast_query_parsers,
    },
    "sse": {"sseclient-py": sse_sseclient, "httpx-sse": sse_httpx_sse},
    "ndjson": {"orjson": ndjson_orjson},
}
