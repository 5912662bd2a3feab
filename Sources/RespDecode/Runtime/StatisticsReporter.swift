import Glibc

/// Prints the statistics on standard error while a run goes on: a JSON line every `interval` seconds
/// (`--stats-interval`), and a live progress line, redrawn in place, when standard error is a terminal — never when
/// it is not (a log file gets no carriage returns).
public final class StatisticsReporter: @unchecked Sendable {
    private let statistics: Statistics
    private let interval: Double?
    private let progress: Bool
    private let monitor = Monitor()
    private var stopping = false
    private var thread: WorkerThread?
    private var progressShown = false

    /// - Parameters:
    ///   - statistics: the counts to report.
    ///   - interval: seconds between JSON lines, or nil for none.
    ///   - progress: draw the progress line; by default when standard error is a terminal.
    public init(statistics: Statistics, interval: Double?, progress: Bool? = nil) {
        self.statistics = statistics
        self.interval = interval
        self.progress = progress ?? (isatty(STDERR_FILENO) == 1)
    }

    /// Starts reporting (nothing to do when there is neither an interval nor a terminal).
    public func start() {
        guard interval != nil || progress else { return }
        thread = WorkerThread { [self] in report() }
    }

    /// Stops reporting and clears the progress line.
    public func stop() {
        monitor.withLock {
            stopping = true
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    /// Writes one JSON statistics line now (SIGUSR1).
    public func printLine() {
        monitor.withLock {
            clearProgress()
            Self.writeError(statistics.snapshot.jsonLine)
        }
    }

    private func report() {
        let progressEvery = 0.5
        var nextLine = interval.map { MonotonicClock.now + $0 }
        var nextProgress = MonotonicClock.now + progressEvery
        monitor.withLock {
            while !stopping {
                var deadline = nextLine ?? .infinity
                if progress { deadline = min(deadline, nextProgress) }
                monitor.wait(until: deadline)
                if stopping { break }
                let now = MonotonicClock.now
                if let line = nextLine, now >= line, let interval {
                    clearProgress()
                    Self.writeError(statistics.snapshot.jsonLine)
                    nextLine = line + interval
                }
                if progress && now >= nextProgress {
                    Self.writeError("\r\u{1B}[K" + statistics.snapshot.progressLine)
                    progressShown = true
                    nextProgress = now + progressEvery
                }
            }
            clearProgress()
        }
    }

    private func clearProgress() {
        if progressShown { Self.writeError("\r\u{1B}[K") }
        progressShown = false
    }

    /// Writes to standard error with one `write(2)`, so lines from threads do not interleave.
    public static func writeError(_ text: String) {
        Descriptors.write(text, to: STDERR_FILENO)
    }
}
