#!/usr/bin/env python3
"""The zlib inflate floor of bench/crawl: every gzip member of a file (a .warc.gz holds one per record) inflated one
after another with Python's zlib.decompressobj (zlib itself plus a few microseconds per member), the output dropped.

    python3 bench/peers/zlib_members.py FILE.gz      prints "members N bytes M" (M: the inflated bytes)

The file is read into memory first; each member is inflated by a new decompressobj(31) (gzip wrapper), whose
unused_data starts the next member.
"""
import sys
import zlib


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    members = inflated = 0
    rest = memoryview(data)
    while len(rest):
        d = zlib.decompressobj(31)
        inflated += len(d.decompress(rest))
        if not d.eof:
            sys.exit(f"zlib_members: a member is cut short at byte {len(data) - len(rest)}")
        members += 1
        rest = rest[len(rest) - len(d.unused_data):]
    print(f"members {members} bytes {inflated}")


if __name__ == "__main__":
    main()
