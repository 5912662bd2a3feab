import Glibc

/// A mutex for state shared between threads: a framer's recycled blocks (``FramerInput/Recycler``), a URL expression's
/// compiled copies (``URLRegex``), and through ``Locked`` the charset tables and the signal handlers. The runtime's
/// `Monitor` adds condition variables to a mutex of its own; the stages under the runtime may not use it
/// (LayeringTests).
///
/// A pthread mutex, not `Synchronization.Mutex`: ThreadSanitizer does not see the latter on Linux (RELIABILITY.md).
final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value that threads share, read and written only with its `Lock` held: `Synchronization.Mutex`'s interface on a
/// mutex ThreadSanitizer sees.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}
