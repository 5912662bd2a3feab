import ArgumentParser
import Logging
import RespDecode

/// Every option of decoding: what `respdecode [OPTIONS] [FILE ...]` takes besides its files, shared by every
/// subcommand that decodes or describes decoding (`config`, `serve`), with the one function that
/// validates them and builds a ``Configuration``.
///
/// Every flag has a `--no-` form and the last of the two wins: a config file's flags come before the command line's
/// (see ``Invocation``), so that the command line can turn off what the file turns on.
struct DecodeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read options from this JSON file: an object whose keys are the long option names "
        + "(\"max-depth\": 64); options given on the command line win. 'respdecode config' prints one.",
        valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("How input is framed: \(InputFormat.allCases.map(\.rawValue).joined(separator: ", ")).",
        valueName: "format"))
    var input = "auto"

    @Option(help: ArgumentHelp("WARC record types that become lines, comma-separated, or 'all' (the others are skipped "
        + "and counted): \(warcTypeNames.joined(separator: ", ")).", valueName: "types"))
    var warcTypes = "response,resource"

    @Flag(inversion: .prefixedNo,
        help: "Check WARC-Payload-Digest and report \"digest\" (--no-digest-check saves a SHA-1 over every payload).")
    var digestCheck = true

    @Flag(inversion: .prefixedNo,
        help: "A WARC payload digest mismatch is a digestMismatch error on the line (the value is still decoded).")
    var strictDigests = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Take a missing or application/octet-stream MIME type from the "
        + "body's first bytes (the line says \"sniffed\": true)."))
    var sniff = false

    @Option(help: ArgumentHelp("Decoders to try, in order (available: \(availableDecoders)).", valueName: "names"))
    var chain = DecoderRegistry.all.map(\.name).joined(separator: ",")

    @Option(
        name: .customLong("accept"),
        help: ArgumentHelp(
            "Replace a decoder's acceptable MIME types, e.g. json=application/json,application/*+json. Wildcards: "
                + "type/*, */*, */*+suffix. Repeatable. Default: each decoder's own types.",
            valueName: "decoder=types"))
    var accept: [String] = []

    @Option(help: ArgumentHelp("Acceptable status codes, as codes and ranges.", valueName: "list"))
    var statusCodes = StatusCodeSet.successful.description

    @Flag(inversion: .prefixedNo,
        help: "A MIME type that no decoder accepts is an unacceptableContentType error instead of a raw value.")
    var strictTypes = false

    @Flag(inversion: .prefixedNo,
        help: "Keep null members and null array elements in JSON values (they are removed by default).")
    var keepNulls = false

    @Flag(inversion: .prefixedNo,
        help: "Keep whitespace-only text between XML elements as text children (dropped by default).")
    var xmlKeepWhitespace = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Decode PNG and JPEG images in full to RGBA8 and report the byte "
        + "count, mean colour and dHash (AFNetworking's automaticallyInflatesResponseImage). Default: metadata from "
        + "the headers only."))
    var inflate = false

    @Option(help: ArgumentHelp("AFNetworking's imageScale: add pointWidth/pointHeight (pixels divided by this) to image "
        + "values, 0.001 to 1000. Default: none.", valueName: "factor"))
    var scale: Double?

    @Option(help: ArgumentHelp("Most pixels (width x height) an image may have to be decoded with --inflate.",
        valueName: "n"))
    var maxImagePixels = 100_000_000

    @Option(help: ArgumentHelp("Most scans of a progressive JPEG decoded with --inflate.", valueName: "n"))
    var maxJpegScans = 1000

    @Option(help: ArgumentHelp("Most pixels a progressive JPEG's scans may cover together (scans x width x height) "
        + "with --inflate.", valueName: "n"))
    var maxJpegScanPixels = 2_000_000_000

    @Option(help: ArgumentHelp("Most memory libjpeg may use for one image.", valueName: "size"))
    var maxImageMemory = "256MiB"

    @Option(help: ArgumentHelp("Largest PNG text or ICC chunk after decompression.", valueName: "size"))
    var maxImageChunkBytes = "8000000"

    @Option(help: ArgumentHelp("Line format: ndjson or pretty.", valueName: "style"))
    var output = OutputStyle.ndjson.rawValue

    @Option(help: ArgumentHelp("Largest response header section (also each chunk-size line and trailer section).",
        valueName: "size"))
    var maxHeaderBytes = "64KiB"

    @Option(help: ArgumentHelp("Largest body as framed (after de-chunking).", valueName: "size"))
    var maxBodyBytes = "64MiB"

    @Option(help: ArgumentHelp("Largest body after Content-Encoding is undone (every coding's output counts).",
        valueName: "size"))
    var maxDecodedBodyBytes = "64MiB"

    @Option(help: ArgumentHelp("Most content codings a Content-Encoding list may stack (identity does not count).",
        valueName: "n"))
    var maxContentCodings = 4

    @Option(help: ArgumentHelp("Deepest nesting of JSON arrays and objects, XML elements and plist containers.",
        valueName: "n"))
    var maxDepth = 512

    @Option(help: ArgumentHelp("Most objects a property list may expand to (a shared object counts at each use).",
        valueName: "n"))
    var maxPlistObjects = 1_000_000

    @Option(help: ArgumentHelp("Largest JSON value of one xml or plist body (guards entity and shared-object "
        + "expansion).", valueName: "size"))
    var maxValueBytes = "64MiB"

    @Option(help: ArgumentHelp("Most bytes of a failing body kept in a line's \"body\".", valueName: "size"))
    var maxErrorBodyBytes = "4KiB"

    @Flag(inversion: .prefixedNo, help: "Exit 1 when any line has \"ok\": false.")
    var strict = false

    @Option(help: ArgumentHelp("Least severe log messages written to standard error: trace, debug, info, notice, "
        + "warning, error, critical.", valueName: "level"))
    var logLevel = "warning"

    @Option(help: ArgumentHelp("Records decoded at once, 1 to 1024. (default: the number of cores this process may run "
        + "on, \(Configuration.defaultJobs) here)", valueName: "n"))
    var jobs: Int?

    @Flag(inversion: .prefixedNo, help: "Print a run summary on standard error at the end.")
    var stats = false

    @Option(help: ArgumentHelp("Print the run summary as a JSON line on standard error every this many seconds "
        + "(fractions allowed, at most 86400). Default: never.", valueName: "seconds"))
    var statsInterval: Double?

    /// The record types of WARC 1.1 (§6).
    static let warcTypeNames = [
        "warcinfo", "response", "resource", "request", "metadata", "revisit", "conversion", "continuation",
    ]

    static var availableDecoders: String { DecoderRegistry.all.map(\.name).joined(separator: ", ") }

    func makeConfiguration() throws -> Configuration {
        var configuration = Configuration()
        guard let inputFormat = InputFormat(rawValue: input) else {
            throw ValidationError("unknown --input '\(input)'; expected one of: "
                + InputFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        configuration.input = inputFormat
        if warcTypes == "all" {
            configuration.warcTypes = nil
        } else {
            var types: Set<String> = []
            for name in warcTypes.split(separator: ",").map({ String($0.trimmingCharacters()).lowercased() }) {
                guard Self.warcTypeNames.contains(name) else {
                    throw ValidationError("unknown WARC record type '\(name)' in --warc-types; expected 'all' or some of: "
                        + Self.warcTypeNames.joined(separator: ", "))
                }
                types.insert(name)
            }
            guard !types.isEmpty else { throw ValidationError("--warc-types names no record type") }
            configuration.warcTypes = types
        }
        configuration.verifyDigests = digestCheck
        configuration.strictDigests = strictDigests
        configuration.sniff = sniff
        guard let style = OutputStyle(rawValue: output) else {
            throw ValidationError("unknown --output '\(output)'; expected ndjson or pretty")
        }
        configuration.outputStyle = style

        var entries: [ChainEntry] = []
        for name in chain.split(separator: ",").map({ String($0.trimmingCharacters()) }) {
            guard let decoder = DecoderRegistry.decoder(named: name) else {
                throw ValidationError("unknown decoder '\(name)' in --chain; available: \(Self.availableDecoders)")
            }
            guard !entries.contains(where: { $0.decoder.name == name }) else {
                throw ValidationError("decoder '\(name)' appears twice in --chain")
            }
            entries.append(ChainEntry(decoder: decoder))
        }
        guard !entries.isEmpty else { throw ValidationError("--chain names no decoder") }
        for override in accept {
            let parts = override.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw ValidationError("--accept '\(override)' is not decoder=types") }
            let name = String(parts[0])
            guard let index = entries.firstIndex(where: { $0.decoder.name == name }) else {
                throw ValidationError("--accept names '\(name)', which is not in --chain")
            }
            var patterns: [MediaTypePattern] = []
            for text in parts[1].split(separator: ",") {
                guard let pattern = MediaTypePattern(String(text)) else {
                    throw ValidationError("--accept: '\(text)' is not a MIME type pattern (type/subtype)")
                }
                patterns.append(pattern)
            }
            entries[index].acceptableTypes = patterns
        }
        configuration.chain = entries

        guard let codes = StatusCodeSet(parsing: statusCodes) else {
            throw ValidationError("--status-codes '\(statusCodes)' is not a list of codes and ranges like 200-299,304")
        }
        configuration.acceptableStatusCodes = codes
        configuration.strictTypes = strictTypes
        configuration.stripNulls = !keepNulls
        configuration.xmlKeepWhitespace = xmlKeepWhitespace

        // Bounded so that no limit can make an allocation or an offset computation absurd.
        func size(_ text: String, _ option: String) throws -> Int {
            guard let value = ByteCount.parse(text), value > 0, value <= 1 << 40 else {
                throw ValidationError("\(option) '\(text)' is not a size from 1 byte to 1TiB, like 4096, 64KiB or 64MiB")
            }
            return value
        }
        configuration.limits.maxHeaderBytes = try size(maxHeaderBytes, "--max-header-bytes")
        configuration.limits.maxBodyBytes = try size(maxBodyBytes, "--max-body-bytes")
        configuration.limits.maxErrorBodyBytes = try size(maxErrorBodyBytes, "--max-error-body-bytes")
        configuration.limits.maxDecodedBodyBytes = try size(maxDecodedBodyBytes, "--max-decoded-body-bytes")
        guard maxContentCodings >= 0 && maxContentCodings <= 100 else {
            throw ValidationError("--max-content-codings must be from 0 to 100")
        }
        configuration.limits.maxContentCodings = maxContentCodings
        guard maxDepth > 0 && maxDepth <= 1_000_000 else { throw ValidationError("--max-depth must be from 1 to 1000000") }
        configuration.limits.maxDepth = maxDepth
        guard maxPlistObjects > 0 && maxPlistObjects <= 1 << 40 else {
            throw ValidationError("--max-plist-objects must be from 1 to \(1 << 40)")
        }
        configuration.limits.maxPlistObjects = maxPlistObjects
        configuration.limits.maxValueBytes = try size(maxValueBytes, "--max-value-bytes")
        configuration.imageInflate = inflate
        if let scale {
            guard scale.isFinite, scale >= 0.001, scale <= 1000 else {
                throw ValidationError("--scale must be from 0.001 to 1000")
            }
            configuration.imageScale = scale
        }
        guard maxImagePixels > 0 && maxImagePixels <= 1 << 40 else {
            throw ValidationError("--max-image-pixels must be from 1 to \(1 << 40)")
        }
        configuration.limits.maxImagePixels = maxImagePixels
        guard maxJpegScans > 0 && maxJpegScans <= 1_000_000 else {
            throw ValidationError("--max-jpeg-scans must be from 1 to 1000000")
        }
        configuration.limits.maxJPEGScans = maxJpegScans
        configuration.limits.maxImageChunkBytes = try size(maxImageChunkBytes, "--max-image-chunk-bytes")
        guard maxJpegScanPixels > 0 && maxJpegScanPixels <= 1 << 50 else {
            throw ValidationError("--max-jpeg-scan-pixels must be from 1 to \(1 << 50)")
        }
        configuration.limits.maxJPEGScanPixels = maxJpegScanPixels
        configuration.limits.maxImageMemory = try size(maxImageMemory, "--max-image-memory")

        if let jobs {
            guard jobs >= 1 && jobs <= 1024 else { throw ValidationError("--jobs must be from 1 to 1024") }
            configuration.jobs = jobs
        }
        configuration.stats = stats
        if let statsInterval {
            guard statsInterval.isFinite, statsInterval > 0, statsInterval <= 86400 else {
                throw ValidationError("--stats-interval must be a number of seconds above 0 and at most 86400")
            }
            configuration.statsInterval = statsInterval
        }
        return configuration
    }

    /// The `--log-level`, checked.
    func makeLogLevel() throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown --log-level '\(logLevel)'; expected one of: "
                + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return level
    }

    /// Checks every option as the command line is parsed (ArgumentParser calls this for an option group), so that a
    /// bad value is a usage error before anything is read, and a config file's values can be tried one at a time.
    func validate() throws {
        _ = try makeConfiguration()
        _ = try makeLogLevel()
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
