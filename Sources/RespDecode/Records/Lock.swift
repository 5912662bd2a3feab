import Glibc

/// A mutex for state shared between threads below the runtime: a framer's recycled blocks (``FramerInput/Recycler``)
/// and a URL expression's compiled copies (``URLRegex``). The runtime's `Monitor` adds condition variables to a mutex
/// of its own; the stages under the runtime may not use it (LayeringTests).
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
