import Glibc
public import Logging
public import RespDecode

/// What ``StreamRunner`` writes reading `input` from a descriptor (a temporary file), as a stream's reference: the
/// DecodeStream tests and the decode-stream fuzz target compare a pushed stream with it.
public enum RunnerOutput {
    /// Why the runner could not be run.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The lines and summary of `input` run through a ``StreamRunner`` with `configuration` (on `pool`, if given).
    /// With more than one job the input is framed on the workers, in pieces, as when more inputs follow it
    /// (docs/framings.md#several-inputs-at-once): it is followed by an empty `--files-from` list.
    public static func of(
        _ input: [UInt8], configuration: Configuration, pool: JobPool? = nil, logger: Logger
    ) throws -> (lines: [UInt8], summary: RunSummary) {
        guard let inFile = tmpfile(), let outFile = tmpfile(), let listFile = tmpfile() else {
            throw Failure(description: "no temporary file")
        }
        defer {
            fclose(inFile)
            fclose(outFile)
            fclose(listFile)
        }
        let inFD = fileno(inFile)
        let outFD = fileno(outFile)
        try input.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let n = write(inFD, raw.baseAddress! + written, raw.count - written)
                guard n > 0 else { throw Failure(description: "cannot write a temporary file") }
                written += n
            }
        }
        lseek(inFD, 0, SEEK_SET)
        let summary = try StreamRunner(
            configuration: configuration, logger: logger, outputDescriptor: outFD, pool: pool
        ).run([.descriptor(inFD)], thenFilesNamedIn: .descriptor(fileno(listFile)))
        lseek(outFD, 0, SEEK_SET)
        var lines: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(outFD, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            lines += chunk[0..<n]
        }
        return (lines, summary)
    }
}
