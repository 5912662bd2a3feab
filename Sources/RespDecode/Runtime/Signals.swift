internal import CShims
import Glibc
import Synchronization

/// SIGTERM and SIGINT ask for a drain (docs/output.md#exit-status): readers stop reading, every record already read
/// gets its line, and
/// the process exits 143 or 130 when input was left unread. A second one exits at once. SIGUSR1 prints the
/// statistics.
///
/// The C handler writes the signal's number to a pipe; a thread here reads it. A stop is seen by readers through
/// `isRequested` and through `wakeDescriptor`, which turns readable (for good) so that a reader blocked in `poll`
/// wakes up.
public final class Shutdown: Sendable {
    /// The process's one instance.
    public static let shared = Shutdown()

    private let signalNumber = Atomic<Int32>(0)
    private let wakePipe: (read: Int32, write: Int32)
    private let onStatistics = Locked<(@Sendable () -> Void)?>(nil)
    private let onRequest = Locked<[@Sendable (Int32) -> Void]>([])

    private init() {
        wakePipe = Descriptors.makePipe() ?? (-1, -1)
    }

    /// The signal that asked for the stop (SIGTERM or SIGINT), or nil.
    public var requested: Int32? {
        let number = signalNumber.load(ordering: .acquiring)
        return number == 0 ? nil : number
    }

    /// Readable once a stop was requested (and for good): poll it beside an input or a listening socket, and never
    /// read from it or close it.
    public var wakeDescriptor: Int32 { wakePipe.read }

    /// Asks every reader to stop (what SIGTERM does); also for tests and for `serve`.
    public func request(_ number: Int32) {
        let (exchanged, _) = signalNumber.compareExchange(
            expected: 0, desired: number, ordering: .acquiringAndReleasing)
        if exchanged {
            var byte: UInt8 = 1
            _ = write(wakePipe.write, &byte, 1)
            for handler in onRequest.withLock({ $0 }) { handler(number) }
        }
    }

    /// Runs `handler` (on the thread that asks for the stop) when a stop is requested, or at once if one was: how an
    /// event loop (`serve`) hears of it without a thread polling ``wakeDescriptor``.
    public func whenRequested(_ handler: @escaping @Sendable (Int32) -> Void) {
        let already = onRequest.withLock { handlers -> Int32? in
            if let number = requested { return number }
            handlers.append(handler)
            return nil
        }
        if let already { handler(already) }
    }

    /// What SIGUSR1 runs (on the signal thread).
    public func setStatisticsHandler(_ handler: (@Sendable () -> Void)?) {
        onStatistics.withLock { $0 = handler }
    }

    /// Routes SIGTERM, SIGINT and SIGUSR1 here. Call once, before reading.
    public func installSignalHandlers() {
        guard let (readEnd, writeEnd) = Descriptors.makePipe(), respdecode_forward_signals(writeEnd) == 0 else {
            return
        }
        _ = WorkerThread { [self] in
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { return }
                let number = Int32(byte)
                if number == SIGUSR1 {
                    onStatistics.withLock { $0 }?()
                } else if requested != nil {
                    // The second SIGTERM/SIGINT: the user does not want to wait for the drain.
                    _exit(128 + number)
                } else {
                    request(number)
                }
            }
        }
    }
}
