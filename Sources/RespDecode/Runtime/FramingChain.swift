/*
 Framing plain inputs on the workers, several at once (docs/framings.md#several-inputs-at-once).

 A `.warc.gz` is cut into spans that the workers inflate side by side (Runtime/MemberSpans.swift). Every other input
 read from a regular file (plain, zstd and LZ4 WARC, ARC, raw HTTP, HAR, NDJSON) has no boundary that can be found
 without framing everything before it, so one input is framed by one framer from its first byte to its last; what
 can run side by side is the framing of different inputs. With more than one job, such an input is framed in pieces
 on the workers: a piece reads up to `FramingChain.pieceReadBytes` of the file, or stops once its items hold
 `FramingChain.pieceHeldBytes`, and the worker that framed it queues the next piece of the same input (the framer and
 its unread bytes go on from one piece to the next, one piece of an input at a time). The reader takes the pieces back
 in input order, numbers their items and hands them out to be decoded, as it does a span's. Up to `jobs` inputs are
 framed at once; an input runs at most `FramingChain.piecesAhead` pieces ahead of the reader.

 Only regular files: a pipe or a socket must give its lines while it is idle, which the reader's own loop does (it
 watches the descriptor and the idle timeout).

 Memory: at most `jobs` inputs, each with `piecesAhead` pieces waiting and one being framed (each at most
 `pieceHeldBytes` of bodies plus the record that reached it) and its framer's buffer (what it read and has not framed:
 at most `pieceReadBytes` plus a read plus a partial record; a HAR input, parsed when it ends, is held whole as with
 one job) and decompressor, on top of the batches in flight. See docs/framings.md#several-inputs-at-once.
 */
import Glibc
import Logging

/// A piece of an input framed on a worker: its items, in order. See the file comment.
struct FramedPiece {
    var items: [FramedItem] = []
    /// The input's last piece: its framer was given the end of the input.
    var isLast = false
    /// Reading the input failed in this piece (logged; the input's end is taken to be there).
    var readFailed = false
    /// With the last piece: the records the framer read and did not yield, by type.
    var skippedRecords: [String: Int] = [:]
}

/// One input framed in pieces on the workers, one piece at a time. See the file comment.
final class FramingChain: @unchecked Sendable {
    /// Bytes a piece reads at most…
    static let pieceReadBytes = 1 << 20
    /// …and body bytes its items hold at most (it stops after the item that reaches this).
    static let pieceHeldBytes = 1 << 20
    /// Pieces framed and not yet taken by the reader before the input's framing waits for it.
    static let piecesAhead = 2

    /// The input's `input` on each line.
    let name: String?

    // The framer's side: touched by the one worker framing the current piece, or by the reader once the chain is
    // halted and no piece runs (the monitor orders the two).
    private var framer: any RecordFramer
    private var buffer: FramerInput
    private var ended: Bool
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let readSize: Int
    private let statistics: Statistics
    private let logger: Logger
    private let logName: String

    // Under `monitor`.
    private let monitor = Monitor()
    private var framed = FIFO<FramedPiece>()
    /// A piece is being framed, or queued on the pool to be.
    private var running = false
    /// The last piece is framed (once `framed` is empty too, the reader took it).
    private var finished = false
    /// The reader stopped the chain (a signal, or output gone): no piece is started any more.
    private var halted = false

    /// - Parameters:
    ///   - framer: the input's framer, fresh.
    ///   - buffer: what the reader read of the input already (for detection).
    ///   - ended: whether the reader saw the input's end already.
    ///   - descriptor: the input, a regular file, positioned after `buffer`'s bytes.
    ///   - closesDescriptor: close it once the input is framed (the runner opened it).
    ///   - readSize: bytes read at a time.
    ///   - statistics: where the bytes read are counted.
    ///   - logger: where a read error is told.
    ///   - name: the input's name on the lines.
    ///   - logName: its name in messages.
    init(
        framer: any RecordFramer, buffer: FramerInput, ended: Bool, descriptor: Int32, closesDescriptor: Bool,
        readSize: Int, statistics: Statistics, logger: Logger, name: String?, logName: String
    ) {
        self.framer = framer
        self.buffer = buffer
        self.ended = ended
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
        self.readSize = readSize
        self.statistics = statistics
        self.logger = logger
        self.name = name
        self.logName = logName
    }

    /// Whether the input is framed to its end (its last piece may still be waiting for the reader).
    var isFinished: Bool { monitor.withLock { finished } }

    /// Queues the first piece.
    func start(on pool: JobPool) {
        monitor.withLock { running = true }
        pool.perform { self.step(on: pool) }
    }

    /// What ``take(waiting:pool:)`` gives.
    enum Taken {
        case piece(FramedPiece)
        /// Not waiting, and the next piece is not framed yet.
        case notReady
        /// The last piece was taken.
        case done
    }

    /// The next piece in order (on the reader's thread); `waiting`: waits for it when it is still being framed.
    /// Taking a piece lets the framing go on when it was waiting for the reader.
    func take(waiting: Bool, pool: JobPool) -> Taken {
        while true {
            let (taken, resume): (Taken?, Bool) = monitor.withLock {
                if let piece = framed.removeFirst() { return (.piece(piece), startIfWaiting()) }
                if finished { return (.done, false) }
                let resume = startIfWaiting()
                if !waiting { return (.notReady, resume) }
                if !resume { monitor.wait() }
                return (nil, resume)
            }
            if resume { pool.perform { self.step(on: pool) } }
            if let taken { return taken }
        }
    }

    /// Stops the framing (on the reader's thread, after a stop): waits for the piece in flight, then gives the pieces
    /// framed and, as `decodeLast(seenEOF: false)` would, the complete items left in the framer's buffer; `cut`: the
    /// input was not framed to its end.
    func halt() -> (pieces: [FramedPiece], cut: Bool) {
        var (pieces, cut): ([FramedPiece], Bool) = monitor.withLock {
            halted = true
            while running { monitor.wait() }
            var pieces: [FramedPiece] = []
            while let piece = framed.removeFirst() { pieces.append(piece) }
            return (pieces, !finished)
        }
        if cut {
            var last = FramedPiece(isLast: true)
            while let item = framer.decodeLast(buffer: &buffer, seenEOF: false) { last.items.append(item) }
            last.skippedRecords = framer.skippedRecords
            pieces.append(last)
            closeDescriptor()
            monitor.withLock { finished = true }
        }
        return (pieces, cut)
    }

    /// Under the monitor: whether the next piece is to be started now (no piece running, the input not framed to its
    /// end, the reader has room, no halt); marks it running if so.
    private func startIfWaiting() -> Bool {
        guard !running && !finished && !halted && framed.count < Self.piecesAhead else { return false }
        running = true
        return true
    }

    /// Frames one piece (on a worker), then queues the next unless the reader is `piecesAhead` pieces behind.
    private func step(on pool: JobPool) {
        let piece = frame()
        let again = monitor.withLock {
            framed.append(piece)
            if piece.isLast { finished = true }
            running = false
            let again = startIfWaiting()
            monitor.broadcast()
            return again
        }
        if again { pool.perform { self.step(on: pool) } }
    }

    /// Frames the next piece: items until they hold `pieceHeldBytes` or `pieceReadBytes` more are read; all that is
    /// left when the input ends.
    private func frame() -> FramedPiece {
        var piece = FramedPiece()
        var held = 0
        var lastBlock: ObjectIdentifier?
        var read = 0
        while held < Self.pieceHeldBytes {
            if let item = ended ? framer.decodeLast(buffer: &buffer, seenEOF: true) : framer.decode(buffer: &buffer) {
                held += item.weigh(lastBlock: &lastBlock).held
                piece.items.append(item)
                continue
            }
            if ended {
                piece.isLast = true
                piece.skippedRecords = framer.skippedRecords
                closeDescriptor()
                break
            }
            if read >= Self.pieceReadBytes { break }
            let n = readSome()
            if n > 0 {
                read += n
            } else {
                // As on the reader: a read error ends the input there, and a record it cuts is truncated.
                piece.readFailed = n < 0
                ended = true
            }
        }
        return piece
    }

    /// Reads up to `readSize` bytes into the buffer: the count, 0 at the end, -1 after an error (logged).
    private func readSome() -> Int {
        let size = readSize
        let descriptor = descriptor
        return buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { spare in
            while true {
                let n = read(descriptor, spare.baseAddress, size)
                if n >= 0 {
                    if n > 0 { statistics.addBytesRead(n) }
                    return n
                }
                if errno == EINTR || errno == EAGAIN { continue }
                logger.error("cannot read \(logName): \(String(cString: strerror(errno)))")
                return -1
            }
        }
    }

    private func closeDescriptor() {
        if closesDescriptor { close(descriptor) }
    }
}
