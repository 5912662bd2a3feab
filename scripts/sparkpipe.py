"""respdecode as a stage of a real Spark job: what scripts/scaleout-smoke and bench/spark share.

Spark comes from PyPI (pyspark, pinned: the whole engine with its jars, on Java 17+), installed into a virtual
environment outside the repository -- $RESPDECODE_SPARK_VENV, default ~/.cache/respdecode-spark-venv -- the first
time, then reused (about 40 s cold, nothing warm). The stage is Spark's JVM pipe (`JavaRDD.pipe`, PipedRDD): what
Scala and Java jobs use, which inherits the executor's environment and fails the task when the command exits
non-zero. PySpark's own `RDD.pipe` is a Python rewrite that gives the child an empty environment and ignores its exit
status by default, so it is not used. Only the driver is Python; no Python worker runs.
"""
import glob
import os
import shutil
import subprocess
import sys
import time

PYSPARK_VERSION = "4.3.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def say(message):
    print(message, file=sys.stderr, flush=True)


def venv_dir():
    return os.environ.get("RESPDECODE_SPARK_VENV") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                   "respdecode-spark-venv")


def ensure_java():
    """Spark 4 needs Java 17 or later: installs Debian's headless JRE when there is no java (as root, as on CI)."""
    if shutil.which("java"):
        return
    say("sparkpipe: no java; installing openjdk-17-jre-headless")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], check=True, stdout=subprocess.DEVNULL, env=env)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "openjdk-17-jre-headless"], check=True,
                   stdout=subprocess.DEVNULL, env=env)


def reexec_in_venv():
    """Runs the calling script again under the venv's Python, making the venv and installing pyspark first when
    needed; returns only when already there."""
    venv = venv_dir()
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    ensure_java()
    probe = [python, "-c", f"import pyspark, sys; sys.exit(pyspark.__version__ != {PYSPARK_VERSION!r})"]
    if not os.path.exists(python) or subprocess.run(probe, stderr=subprocess.DEVNULL).returncode != 0:
        started = time.time()
        say(f"sparkpipe: installing pyspark=={PYSPARK_VERSION} into {venv} (about 40 s the first time)")
        if not os.path.exists(python):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        f"pyspark=={PYSPARK_VERSION}"], check=True)
        say(f"sparkpipe: installed in {time.time() - started:.0f} s")
    os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])


class Spark:
    """A local Spark session on loopback only, without the web UI or progress bars."""

    def __init__(self, master, app="respdecode"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession
        started = time.time()
        self.session = (SparkSession.builder.master(master).appName(app)
                        .config("spark.ui.enabled", "false")
                        .config("spark.ui.showConsoleProgress", "false")
                        .config("spark.driver.host", "127.0.0.1")
                        .config("spark.driver.bindAddress", "127.0.0.1")
                        # A failing task fails the job at once; a retrying master would run a worker again.
                        .config("spark.task.maxFailures", "1")
                        .getOrCreate())
        self.context = self.session.sparkContext
        self.context.setLogLevel("ERROR")
        self.jsc = self.context._jsc
        self.master = master
        self.startup = time.time() - started
        self.version = self.context.version

    def stop(self):
        self.session.stop()

    def quiet(self, level="OFF"):
        """Sets Spark's log level (OFF while a failure is expected, ERROR otherwise)."""
        self.context.setLogLevel(level)

    def text_file(self, path, partitions):
        """The lines of `path` as a JavaRDD of `partitions` (at least) splits."""
        return self.jsc.textFile(path, partitions)

    def parallelize(self, lines, partitions):
        """`lines` as a JavaRDD in `partitions` even slices (the JVM's parallelize, not PySpark's batches)."""
        return self.jsc.parallelize(list(lines), partitions)

    def save(self, rdd, folder):
        """Writes each partition of `rdd` to folder/part-NNNNN and returns the partitions' lines, in order."""
        shutil.rmtree(folder, ignore_errors=True)
        rdd.saveAsTextFile(folder)
        return read_parts(folder)

    @staticmethod
    def pipe(rdd, command, env=None):
        """The JVM pipe of `rdd` through `command` (an argument list: a string would be split on white space with
        no quoting)."""
        return rdd.pipe(list(command), dict(env or {}))


def read_parts(folder):
    parts = []
    for path in sorted(glob.glob(os.path.join(folder, "part-*"))):
        with open(path, encoding="utf-8") as f:
            parts.append(f.read().splitlines())
    return parts
