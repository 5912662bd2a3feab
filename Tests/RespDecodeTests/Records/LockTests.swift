import Dispatch
import Glibc
import Testing

@testable import RespDecode

/// `Lock` and `Locked` (Records/Lock.swift): they exclude, and a body that throws leaves the lock free.
@Suite("Lock")
struct LockTests {
    /// Unguarded, these read-modify-writes from many threads at once lose updates; under the lock none is lost.
    @Test func excludesOtherThreads() {
        let lock = Lock()
        let total = Total()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 {
                lock.withLock {
                    let value = total.value
                    // A window between the read and the write, which another thread would fall into unguarded.
                    if value % 64 == 0 { sched_yield() }
                    total.value = value + 1
                }
            }
        }
        #expect(total.value == 160_000)
    }

    @Test func aThrowingBodyReleasesTheLock() {
        let lock = Lock()
        struct Failure: Error {}
        #expect(throws: Failure.self) { try lock.withLock { throw Failure() } }
        // Taken on another thread, which a lock still held would block for ever.
        let taken = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { _ = lock.withLock { taken.signal() } }
        let result = taken.wait(timeout: DispatchTime.now() + .seconds(10))
        #expect(result == .success)
    }

    /// `Locked` hands its value to one thread at a time, as `Synchronization.Mutex` does.
    @Test func lockedValueIsChangedByOneThreadAtATime() {
        let total = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 {
                total.withLock { value in
                    let read = value
                    if read % 64 == 0 { sched_yield() }
                    value = read + 1
                }
            }
        }
        #expect(total.withLock { $0 } == 160_000)
    }

    final class Total: @unchecked Sendable {
        var value = 0
    }
}
