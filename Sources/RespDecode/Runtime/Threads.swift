import Glibc

/// A mutex with one condition variable: the only synchronisation the runtime needs. Everything a `Monitor` guards
/// is read and written with its lock held (`withLock`); `wait` is called from inside `withLock`.
final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the lock until `broadcast`, then takes it again. Callers re-check their condition in a loop.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Like `wait`, but returns by `deadline` (a `MonotonicClock` reading in seconds) at the latest.
    func wait(until deadline: Double) {
        var time = timespec()
        time.tv_sec = Int(deadline)
        time.tv_nsec = Int((deadline - Double(time.tv_sec)) * 1e9)
        pthread_cond_timedwait(condition, mutex, &time)
    }

    func broadcast() { pthread_cond_broadcast(condition) }

    /// A further condition variable on this monitor's lock, for waking one chosen waiter.
    final class Condition: @unchecked Sendable {
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>

        fileprivate init(mutex: UnsafeMutablePointer<pthread_mutex_t>) {
            self.mutex = mutex
            pthread_cond_init(condition, nil)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }

        /// Like `Monitor.wait`, on this condition (called with the monitor's lock held).
        func wait() { pthread_cond_wait(condition, mutex) }
        func signal() { pthread_cond_signal(condition) }
    }

    /// A condition on this monitor's lock (the monitor must outlive it).
    func makeCondition() -> Condition { Condition(mutex: mutex) }

    /// Wakes one waiter (where any one of them can take what is waited for).
    func signal() { pthread_cond_signal(condition) }
}

/// The monotonic clock (also `serve`'s, for its progress checks).
public enum MonotonicClock {
    /// Seconds.
    public static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Nanoseconds.
    public static var nanoseconds: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// A thread running `body`, to be joined.
struct WorkerThread: @unchecked Sendable {
    private let thread: pthread_t

    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread (8 MiB of stack, as the main thread has: decoders recurse to `maxDepth`).
    init(_ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        let result = pthread_create(
            &thread, &attributes,
            { context in
                Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, start)
        guard result == 0 else { fatalError("cannot start a thread: \(String(cString: strerror(result)))") }
        self.thread = thread
    }

    func join() { pthread_join(thread, nil) }
}

/// A first-in, first-out queue (amortised O(1) at both ends).
struct FIFO<Element> {
    private var items: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }
    var first: Element? { isEmpty ? nil : items[head] }

    mutating func append(_ item: Element) { items.append(item) }

    mutating func removeFirst() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        items[head] = nil
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
