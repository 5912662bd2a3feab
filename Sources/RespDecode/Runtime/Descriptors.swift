import Glibc

/// The two things the runtime does with raw descriptors in several places: make a wake-up pipe, and write a whole
/// buffer with `write(2)` (whose errors, unlike `print`'s, are seen).
public enum Descriptors {
    /// A pipe whose ends are closed on exec and whose write end never blocks (a wake-up byte that finds the pipe
    /// full is not needed: one is already waiting). Glibc's module has no `pipe2`.
    static func makePipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        return (fds[0], fds[1])
    }

    /// Raises this process's soft limit on open files to its hard limit (`serve`: thousands of connections, each a
    /// descriptor; docs/sidecar.md#semantics).
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Writes all of `bytes` to `fd`, retrying after EINTR. Returns nil, or the `errno` of the failure (EIO when
    /// `write` returned 0).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var written = 0
        while written < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n > 0 {
                written += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            return n < 0 ? errno : EIO
        }
        return nil
    }

    /// Writes all of `text` to `fd`; nil, or the `errno` of the failure.
    @discardableResult
    public static func write(_ text: String, to fd: Int32) -> Int32? {
        var text = text
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }
}
