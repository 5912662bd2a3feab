import Dispatch
import Glibc
import Testing

@testable import RespDecode

/// `Lock` (Records/Lock.swift), the mutex of the recycler and of `URLRegex`'s pool: it excludes, and a body that
/// throws leaves it free.
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

    final class Total: @unchecked Sendable {
        var value = 0
    }
}
