"""What the bench/ scripts share: messages, the release build, and hyperfine medians."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def say(*args):
    print(*args, file=sys.stderr, flush=True)


def die(message, status=2):
    say(f"{os.path.basename(sys.argv[0])}: {message}")
    sys.exit(status)


def data_dir(name):
    """$BENCH_DATA/name (default $TMPDIR/bench-data/name), made if missing."""
    base = os.environ.get("BENCH_DATA") or os.path.join(tempfile.gettempdir(), "bench-data")
    path = os.path.join(base, name)
    os.makedirs(path, exist_ok=True)
    return path


def respdecode_binary(no_build):
    """$RESPDECODE, or a release build in .build-bench (built unless no_build)."""
    if os.environ.get("RESPDECODE"):
        return os.environ["RESPDECODE"]
    build = os.path.join(ROOT, ".build-bench")
    if not no_build:
        say("building respdecode (release) ...")
        subprocess.run(["swift", "build", "-c", "release", "--scratch-path", build, "--product", "respdecode"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build, "release", "respdecode")


def hyperfine(commands, runs, export):
    """{name: (median, min, max, cpu)} seconds of each (name, shell command), timed by hyperfine in one run; cpu is
    the mean user + system time (with several threads it exceeds the wall-clock time)."""
    cmd = ["hyperfine", "--style", "none", "--warmup", "1", "--runs", str(runs), "--export-json", export]
    for name, command in commands:
        cmd += ["-n", name, command]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(export) as f:
        results = json.load(f)["results"]
    return {r["command"]: (statistics.median(r["times"]), min(r["times"]), max(r["times"]), r["user"] + r["system"])
            for r in results}
