"""What bench/form/run, bench/sse/run and bench/ndjson/run share: writing the bodies as one HTTP stream, timing
respdecode on it against a peer's whole job (bench/peers/textual_decode.py: read the stream, frame it by
Content-Length, decode each body, write a JSON line) with hyperfine, and the peers' decoding alone, in memory."""
import os
import statistics
import sys
import time

from benchlib import ROOT, data_dir, hyperfine, http_response, load_average, say

PEER = os.path.join(ROOT, "bench", "peers", "textual_decode.py")


def write_stream(name, bodies, content_type):
    path = os.path.join(data_dir(name), f"{name}.http")
    with open(path, "wb") as f:
        for body in bodies:
            f.write(http_response(body, content_type))
    return path


def in_memory(decode, bodies, passes):
    """The median seconds of `passes` passes of `decode` over every body, in this process."""
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        for body in bodies:
            decode(body)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(name, binary, chain, stream, bodies, peers, decoders, runs):
    """Times respdecode and each peer's whole job on `stream` (hyperfine, medians), then each decoder of `decoders`
    ({label: function of one body}) in memory, and prints the table with ratios (peer / respdecode: above 1.0,
    respdecode is faster)."""
    megabytes = sum(len(b) for b in bodies) / 1e6
    say(f"{len(bodies)} bodies, {megabytes:.1f} MB; load average {load_average()}")
    commands = [("respdecode", f"{binary} --chain {chain} --jobs 1 {stream} > /dev/null")]
    commands += [(peer, f"{sys.executable} {PEER} {name} {peer} {stream} > /dev/null") for peer in peers]
    results = hyperfine(commands, runs, os.path.join(data_dir(name), "hyperfine.json"))
    ours = results["respdecode"][0]
    print(f"\n{name}: {len(bodies)} bodies, {megabytes:.1f} MB, medians of {runs} runs (--jobs 1)")
    print(f"{'what':58} {'seconds':>9} {'MB/s':>8} {'ratio':>7}")
    print(f"{'respdecode, whole job (frame, decode, write lines)':58} {ours:9.3f} {megabytes / ours:8.1f} {'1.00':>7}")
    for label, command in commands[1:]:
        seconds = results[label][0]
        print(f"{('peer, whole job: ' + label):58} {seconds:9.3f} {megabytes / seconds:8.1f} {seconds / ours:7.2f}")
    for label, decode in decoders.items():
        seconds = in_memory(decode, bodies, max(3, runs // 2))
        print(f"{('peer, decoding alone in memory: ' + label):58} {seconds:9.3f} {megabytes / seconds:8.1f} "
              f"{seconds / ours:7.2f}")
    print("ratio: the row's seconds / respdecode's whole job (above 1.00: respdecode is faster)")
