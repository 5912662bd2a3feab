"""What the bench/ scripts share: messages, scratch folders, the release build, HTTP responses, hyperfine, load
average."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = ".build-bench"  # separate from .build, so that benchmarking never blocks a developer's build
DYNAMIC_BUILD_DIR = ".build-bench-dynamic"


def say(*args):
    """Progress and notes, on standard error (standard output is for the results)."""
    print(*args, file=sys.stderr, flush=True)


def die(message, status=2):
    say(f"{os.path.basename(sys.argv[0])}: {message}")
    sys.exit(status)


def data_root():
    """$BENCH_DATA, default $TMPDIR/bench-data: the scratch folder, the same one gen.py and run.py of
    ../shared/bench-peers use. Dies if it is inside the repository."""
    root = os.path.abspath(os.environ.get("BENCH_DATA") or os.path.join(tempfile.gettempdir(), "bench-data"))
    if os.path.commonpath([root, ROOT]) == ROOT:
        die(f"BENCH_DATA ({root}) is inside the repository; point it elsewhere")
    return root


def data_dir(name):
    """data_root()/name, made if missing."""
    path = os.path.join(data_root(), name)
    os.makedirs(path, exist_ok=True)
    return path


def release_build(scratch=BUILD_DIR, static=True):
    """Builds respdecode as the README builds it (release, `--static-swift-stdlib`; the Swift libraries linked
    dynamically instead when not `static`) with the scratch folder `scratch` of the repository, and returns the
    binary. Dies with the end of the compiler's output if the build fails."""
    cmd = ["swift", "build", "-c", "release", "--scratch-path", os.path.join(ROOT, scratch), "--product", "respdecode"]
    cmd += ["--static-swift-stdlib"] if static else []
    say(f"building respdecode (release{'' if static else ', Swift libraries linked dynamically'}) in {scratch} ...")
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        say(p.stdout[-4000:] + p.stderr[-4000:])
        die("swift build failed (sources mid-edit? rerun later, or use --no-build)", 1)
    return os.path.join(ROOT, scratch, "release", "respdecode")


def respdecode_binary(no_build):
    """$RESPDECODE, or the release build in .build-bench (built unless no_build)."""
    if os.environ.get("RESPDECODE"):
        return os.path.abspath(os.environ["RESPDECODE"])
    if no_build:
        return os.path.join(ROOT, BUILD_DIR, "release", "respdecode")
    return release_build()


def http_response(body, content_type):
    """`body` as an HTTP/1.1 200 response with its Content-Type and Content-Length."""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def hyperfine_results(commands, runs, export):
    """hyperfine's results (its JSON export: times, median, min, max, user, system, ...) of each (name, shell command),
    timed in one hyperfine run with one warm-up run; None, after saying hyperfine's error, when a command failed."""
    cmd = ["hyperfine", "--style", "none", "--warmup", "1", "--runs", str(runs), "--export-json", export]
    for name, command in commands:
        cmd += ["-n", name, command]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        say(f"   FAILED: {' / '.join(command for _, command in commands)}\n{p.stderr[-2000:]}")
        return None
    with open(export) as f:
        return json.load(f)["results"]


def hyperfine(commands, runs, export):
    """{name: (median, min, max, cpu)} seconds of each (name, shell command), timed by hyperfine in one run; cpu is
    the mean user + system time (with several threads it exceeds the wall-clock time). Dies if a command fails."""
    results = hyperfine_results(commands, runs, export)
    if results is None:
        die("hyperfine failed", 1)
    return {r["command"]: (statistics.median(r["times"]), min(r["times"]), max(r["times"]), r["user"] + r["system"])
            for r in results}


def load_average():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
