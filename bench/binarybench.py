"""bench/msgpack/run and bench/cbor/run: respdecode's msgpack or cbor decoder against Python's msgpack or cbor2 (their
C extensions, with orjson writing the JSON) and against the C library itself (msgpack-c's msgpack_unpack_next,
libcbor's cbor_load, the tree walked to JSON by bench/peers/binary_decode.c, compiled here), on the same bodies.

    bench/msgpack/run [--bodies N] [--runs N] [--no-build]        (from the repository root; bench/cbor/run alike)

The workload: N distinct bodies (default 20,000) generated here from a seeded generator (nothing copied), four kinds
in turn: an API response (a map of a user with nested maps, tags, a float score, a timestamp and a list of order
lines), an array of 50 records (ids, names, coordinates, booleans, counts), a binary blob (a map with 0.5-4 KB of
random bytes and a 32-byte checksum), a float series (200 doubles and their statistics). Encoded with the msgpack
package (timestamps as extension -1) or cbor2 (instants as tag 1). Written to $BENCH_DATA/NAME (default
$TMPDIR/bench-data/NAME) twice: bodies.http, a raw HTTP/1.1 stream of 200 responses with the format's Content-Type,
and bodies.bin, each body behind a 4-byte big-endian length, for the peers.

Timed by hyperfine (one warm-up, then --runs runs each, alternating), each a whole process writing its lines to
/dev/null: respdecode --jobs 1 on bodies.http (the release build, .build-bench); python3 bench/peers/binary_decode.py
on bodies.bin; the C peer on bodies.bin. Every command's output is checked first: one line per body (respdecode's
all ok, by the format's decoder). Printed: median wall seconds, mean CPU seconds (user + system), MB/s of bodies per
CPU second, and the ratios peer CPU / respdecode CPU (the goal: >= 1.0 against each).

Needs: pip install msgpack cbor2 orjson; hyperfine; cc with libmsgpack-dev and libcbor-dev. Not CI dependencies.
"""
import argparse
import datetime
import os
import random
import subprocess

from benchlib import ROOT, data_dir, die, hyperfine_results, load_average, respdecode_binary, say

TYPES = {"msgpack": "application/msgpack", "cbor": "application/cbor"}
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec "
         "romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def generate(fmt, count, seed=21):
    """`count` distinct bodies in `fmt`."""
    if fmt == "msgpack":
        import msgpack

        def encode(value):
            return msgpack.packb(value, use_bin_type=True, datetime=True)
    else:
        import cbor2

        def encode(value):
            return cbor2.dumps(value, datetime_as_timestamp=True)
    rng = random.Random(seed)
    utc = datetime.timezone.utc

    def name():
        return " ".join(rng.choice(WORDS).capitalize() for _ in range(2))

    bodies = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            value = {
                "id": i, "object": "order", "status": rng.choice(["paid", "open", "refunded"]),
                "created": datetime.datetime.fromtimestamp(1_700_000_000 + i * 37, tz=utc),
                "user": {"id": rng.randrange(1 << 40), "name": name(), "email": f"user{i}@example.test",
                         "verified": rng.random() < 0.5, "score": round(rng.uniform(0, 100), 3),
                         "tags": rng.sample(WORDS, 4), "referrer": None},
                "lines": [{"sku": f"SKU-{rng.randrange(100000):05d}", "qty": rng.randrange(1, 9),
                           "price": round(rng.uniform(1, 500), 2), "title": name()} for _ in range(rng.randrange(1, 8))],
                "total": round(rng.uniform(10, 5000), 2), "currency": "EUR", "next": None,
            }
        elif kind == 1:
            value = [{"id": i * 100 + k, "name": name(), "lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180),
                      "active": rng.random() < 0.7, "count": rng.randrange(-1000, 100000)} for k in range(50)]
        elif kind == 2:
            value = {"id": i, "mime": "application/octet-stream", "name": f"blob-{i}.bin",
                     "data": rng.randbytes(rng.randrange(512, 4096)), "sha256": rng.randbytes(32)}
        else:
            series = [rng.gauss(0, 1e3) for _ in range(200)]
            value = {"series": i, "values": series, "min": min(series), "max": max(series),
                     "mean": sum(series) / len(series)}
        bodies.append(encode(value))
    return bodies


def main(fmt):
    parser = argparse.ArgumentParser()
    parser.add_argument("--bodies", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    folder = data_dir(fmt)
    http, binfile = os.path.join(folder, "bodies.http"), os.path.join(folder, "bodies.bin")
    say(f"generating {args.bodies} {fmt} bodies in {folder} ...")
    bodies = generate(fmt, args.bodies)
    if len(set(bodies)) != len(bodies):
        die("two bodies are equal")
    with open(http, "wb") as h, open(binfile, "wb") as b:
        for body in bodies:
            h.write(f"HTTP/1.1 200 OK\r\nContent-Type: {TYPES[fmt]}\r\nContent-Length: {len(body)}\r\n\r\n".encode())
            h.write(body)
            b.write(len(body).to_bytes(4, "big") + body)
    total = sum(map(len, bodies))
    peer_c = os.path.join(folder, "binary_decode")
    source = os.path.join(ROOT, "bench", "peers", "binary_decode.c")
    subprocess.run(["cc", "-O2", source, "-o", peer_c, "-lmsgpackc", "-lcbor"], check=True)
    binary = respdecode_binary(args.no_build)
    python = os.path.join(ROOT, "bench", "peers", "binary_decode.py")
    commands = [
        ("respdecode", f"{binary} --jobs 1 --chain {fmt} {http}"),
        (f"python {fmt}+orjson", f"python3 {python} {fmt} {binfile}"),
        (f"C {'msgpack-c' if fmt == 'msgpack' else 'libcbor'}", f"{peer_c} {fmt} {binfile}"),
    ]
    for name, command in commands:
        out = subprocess.run(command, shell=True, capture_output=True, check=True).stdout.splitlines()
        if len(out) != len(bodies):
            die(f"{name}: {len(out)} lines for {len(bodies)} bodies")
        if name == "respdecode":
            bad = [line for line in out if f'"decoder":"{fmt}","ok":true'.encode() not in line]
            if bad:
                die(f"respdecode: {len(bad)} lines not ok, e.g. {bad[0][:300]!r}")
    say(f"timing ({args.runs} runs each; load average {load_average()}) ...")
    results = hyperfine_results([(n, c + " > /dev/null") for n, c in commands], args.runs,
                                os.path.join(folder, "hyperfine.json"))
    if results is None:
        die("hyperfine failed", 1)
    import statistics
    rows = {r["command"]: (statistics.median(r["times"]), r["user"] + r["system"]) for r in results}
    mine = rows["respdecode"][1]
    print(f"{fmt}: {len(bodies)} bodies, {total / 1e6:.1f} MB")
    print(f"{'':26} {'wall s':>8} {'CPU s':>8} {'MB/s CPU':>9} {'peer/respdecode':>16}")
    for name, (wall, cpu) in rows.items():
        ratio = "" if name == "respdecode" else f"{cpu / mine:.2f}x"
        print(f"{name:26} {wall:8.3f} {cpu:8.3f} {total / 1e6 / cpu:9.1f} {ratio:>16}")


if __name__ == "__main__":
    die("run bench/msgpack/run or bench/cbor/run")
