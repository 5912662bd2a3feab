import Glibc
public import Logging

/// Where records come from.
public enum InputSource: Sendable, Hashable {
    case standardInput
    case file(String)

    /// The name written as `input` on each line (none for standard input).
    var lineName: String? {
        switch self {
        case .standardInput: nil
        case .file(let path): path
        }
    }
}

/// Why output stopped.
public enum OutputFailure: Error, Sendable, Equatable {
    /// The reader went away (EPIPE). The worker stops quietly.
    case closed
    /// Writing failed otherwise (ENOSPC, EIO, …), with the system's message.
    case failed(String)
}

/// What a run did, for the exit status and statistics.
public struct RunSummary: Sendable, Equatable {
    /// Lines written.
    public var records = 0
    /// Lines with `"ok":true`.
    public var ok = 0
    /// Inputs that could not be opened or read to the end.
    public var failedInputs = 0
    /// Records read and deliberately not decoded (WARC record types not chosen), by kind.
    public var skipped: [String: Int] = [:]
}

/// Reads inputs in large chunks, frames them, decodes every record and writes its line, in input order.
///
/// Output is collected into batches and written with `write(2)` (whose errors, unlike `print`'s, are reported): a
/// batch goes out when it reaches `flushThreshold` bytes and whenever input is idle (nothing more to read right
/// now), so a reader downstream sees each line without waiting for more input.
public final class StreamRunner {
    private let configuration: Configuration
    private let decoder: CompoundDecoder
    private let logger: Logger
    private let outputDescriptor: Int32
    private let out = OutputBuffer(capacity: 1 << 20)
    private let scratch = OutputBuffer()
    private let readSize = 256 * 1024
    private let flushThreshold = 64 * 1024
    private var summary = RunSummary()

    /// - Parameters:
    ///   - outputDescriptor: where lines go. Default: standard output.
    public init(configuration: Configuration, logger: Logger, outputDescriptor: Int32 = 1) {
        self.configuration = configuration
        self.decoder = CompoundDecoder(configuration: configuration)
        self.logger = logger
        self.outputDescriptor = outputDescriptor
    }

    /// Decodes every input in turn; `seq` runs on across inputs.
    /// - Throws: ``OutputFailure`` when lines can no longer be written.
    public func run(_ inputs: [InputSource]) throws(OutputFailure) -> RunSummary {
        for input in inputs {
            try run(input)
        }
        try flush()
        return summary
    }

    private func run(_ input: InputSource) throws(OutputFailure) {
        let fd: Int32
        switch input {
        case .standardInput:
            fd = STDIN_FILENO
        case .file(let path):
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                logger.error("cannot open \(path): \(String(cString: strerror(errno)))")
                summary.failedInputs += 1
                return
            }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }

        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: readSize)
        defer { chunk.deallocate() }

        // Detection wants the first bytes; a pipe may deliver them a few at a time. An idle pipe gets decided on
        // what it has sent, so its lines are not held back — unless what it has sent cannot decide yet (`WAR`, `{`):
        // then reading blocks for more.
        var prefix: [UInt8] = []
        var ended = false
        func undecided() -> Bool {
            configuration.input == .auto
                && prefix.withUnsafeBufferPointer(InputDetection.decide) == .undecided
        }
        while prefix.count < InputDetection.prefixLength && (prefix.isEmpty || inputReady(fd) || undecided()) {
            let n = readSome(fd, into: chunk, input: input)
            if n <= 0 {
                ended = true
                break
            }
            prefix.append(contentsOf: chunk[0..<n])
        }
        var format = configuration.input
        if format == .auto {
            let detected = prefix.withUnsafeBufferPointer(InputDetection.detect)
            if detected == nil && prefix.count >= 5 {
                logger.warning("\(input.lineName ?? "standard input") does not start like any known framing; reading it as raw HTTP")
            }
            format = detected ?? .http
        }
        // One specialised loop per framing: the framer's calls stay direct.
        let limits = configuration.limits
        switch format {
        case .auto, .http:
            var framer = HTTPStreamFramer(limits: limits)
            try pump(&framer, fd: fd, prefix: prefix, ended: ended, chunk: chunk, input: input)
        case .warc:
            var framer = WARCFramer(
                limits: limits, types: configuration.warcTypes, verifyDigests: configuration.verifyDigests)
            try pump(&framer, fd: fd, prefix: prefix, ended: ended, chunk: chunk, input: input)
        case .har:
            var framer = HARFramer(limits: limits)
            try pump(&framer, fd: fd, prefix: prefix, ended: ended, chunk: chunk, input: input)
        case .ndjson:
            var framer = NDJSONFramer(limits: limits)
            try pump(&framer, fd: fd, prefix: prefix, ended: ended, chunk: chunk, input: input)
        }
    }

    /// Feeds the rest of the input through `framer`, writing every item's line, and counts what it skipped.
    private func pump<Framer: RecordFramer>(
        _ framer: inout Framer, fd: Int32, prefix: [UInt8], ended: Bool, chunk: UnsafeMutableBufferPointer<UInt8>,
        input: InputSource
    ) throws(OutputFailure) {
        framer.append(prefix)
        try drain(&framer, input: input)
        var ended = ended
        while !ended {
            // About to block on a pipe with nothing in it: let the reader downstream have what is done.
            if out.count > 0 && !inputReady(fd) { try flush() }
            let n = readSome(fd, into: chunk, input: input)
            if n <= 0 {
                ended = true
                break
            }
            framer.append(UnsafeBufferPointer(rebasing: chunk[0..<n]))
            try drain(&framer, input: input)
        }
        framer.finish()
        try drain(&framer, input: input)
        summary.skipped.merge(framer.skippedRecords, uniquingKeysWith: +)
    }

    /// Reads up to a chunk; 0 at end of input, -1 after a read error (logged, counted).
    private func readSome(_ fd: Int32, into chunk: UnsafeMutableBufferPointer<UInt8>, input: InputSource) -> Int {
        while true {
            let n = read(fd, chunk.baseAddress, chunk.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            logger.error("cannot read \(input.lineName ?? "standard input"): \(String(cString: strerror(errno)))")
            summary.failedInputs += 1
            return -1
        }
    }

    /// Whether more input can be read without blocking.
    private func inputReady(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    private func drain(_ framer: inout some RecordFramer, input: InputSource) throws(OutputFailure) {
        while let item = framer.next() {
            let source = ResultLine.Source(seq: summary.records, offset: item.offset, input: input.lineName)
            let ok: Bool
            if configuration.outputStyle == .pretty {
                scratch.removeAll()
                ok = decoder.writeLine(for: item, source: source, into: scratch)
                PrettyPrinter.append(UnsafeBufferPointer(start: scratch.base, count: scratch.count - 1), to: out)
            } else {
                ok = decoder.writeLine(for: item, source: source, into: out)
            }
            summary.records += 1
            if ok { summary.ok += 1 }
            if out.count >= flushThreshold { try flush() }
        }
    }

    /// Writes the batch out.
    public func flush() throws(OutputFailure) {
        var written = 0
        while written < out.count {
            let n = write(outputDescriptor, out.base + written, out.count - written)
            if n > 0 {
                written += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            out.removeAll()
            if n < 0 && errno == EPIPE { throw .closed }
            throw .failed(n < 0 ? String(cString: strerror(errno)) : "write returned 0")
        }
        out.removeAll()
    }
}
