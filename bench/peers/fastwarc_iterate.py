#!/usr/bin/env python3
"""FastWARC reading a crawl and nothing more: the floor of issue 22's "all cores" goal (bench/crawl).

    python3 bench/peers/fastwarc_iterate.py FILE.warc[.gz] ...      (pip install fastwarc)

Iterates every record of every FILE with FastWARC's ArchiveIterator (its native reader, given the path; gzip members
detected as it detects them), with parse_http=True so that the HTTP status line and headers of every application/http
record are parsed, and touches no body: no read, no digest, no decoding. Prints one summary line on stdout: the records
per WARC-Type, the responses, and the sum of their HTTP status codes (so that the heads are used, and checked).
"""
import sys

try:
    from fastwarc.warc import ArchiveIterator, WarcRecordType
except ImportError as e:
    sys.exit(f"fastwarc_iterate: {e} (pip install fastwarc)")


RESPONSE = int(WarcRecordType.response)
NAMES = {int(getattr(WarcRecordType, name)): name
         for name in ("warcinfo", "response", "resource", "request", "metadata", "revisit", "conversion",
                      "continuation", "unknown")}


def main():
    counts, responses, statuses = {}, 0, 0
    for path in sys.argv[1:]:
        for rec in ArchiveIterator(path, parse_http=True):
            kind = int(rec.record_type)  # the enum's values are not hashable
            counts[kind] = counts.get(kind, 0) + 1
            if kind == RESPONSE:
                responses += 1
                statuses += rec.http_headers.status_code if rec.http_headers is not None else 0
    names = ", ".join(f"{NAMES.get(k, k)}={n}" for k, n in sorted(counts.items()))
    print(f"records: {names}; responses={responses} status_sum={statuses}")


if __name__ == "__main__":
    main()
