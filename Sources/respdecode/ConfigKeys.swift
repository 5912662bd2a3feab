import Logging
import RespDecode

/// One key of a config file: the long name of an option, how its JSON value becomes that option's arguments, and how
/// `respdecode config` writes its effective value.
///
/// A key checks only the JSON type of its value; what the value means is checked where the command line's is, by
/// parsing the arguments it becomes (see ``Invocation``).
struct ConfigKey: Sendable {
    /// What a key's value may be, and the arguments it becomes. `null` is allowed for every key and means the
    /// option's default (no arguments).
    enum Shape: Sendable {
        /// `true` or `false`: `--name` or `--no-name`.
        case flag
        /// A string or a number (its text as written): `--name=text`.
        case value
        /// An array of strings or numbers, or one (comma-separated) string or number: `--name=a,b`.
        case list
        /// An object of decoder names to lists as for `.list`: `--name=decoder=a,b` for each decoder.
        case decoderLists
    }

    let name: String
    let shape: Shape
    /// The value that sets the option as `options` has it.
    let effective: @Sendable (EffectiveOptions) -> ConfigFile.Value

    init(_ name: String, _ shape: Shape, _ effective: @escaping @Sendable (EffectiveOptions) -> ConfigFile.Value) {
        self.name = name
        self.shape = shape
        self.effective = effective
    }

    /// The arguments that `entry` (whose key is this one) stands for.
    func arguments(for entry: ConfigFile.Entry, in file: ConfigFile) throws(ConfigFileError) -> [String] {
        func wrongType(_ expected: String, found: String) -> ConfigFileError {
            file.error(.wrongType, "expected \(expected), found \(found)", at: entry)
        }
        func listText(_ value: ConfigFile.Value) throws(ConfigFileError) -> String {
            switch value {
            case .string(let text), .number(let text):
                return text
            case .array(let elements):
                var items: [String] = []
                for element in elements {
                    switch element {
                    case .string(let text), .number(let text): items.append(text)
                    default: throw wrongType("an array of strings", found: "an array holding \(element.typeName)")
                    }
                }
                return items.joined(separator: ",")
            default:
                throw wrongType("an array of strings, or one comma-separated string", found: value.typeName)
            }
        }

        switch (shape, entry.value) {
        case (_, .null):
            return []
        case (.flag, .bool(let on)):
            return [on ? "--\(name)" : "--no-\(name)"]
        case (.flag, let value):
            throw wrongType("true or false", found: value.typeName)
        case (.value, .string(let text)), (.value, .number(let text)):
            return ["--\(name)=\(text)"]
        case (.value, let value):
            throw wrongType("a string or a number", found: value.typeName)
        case (.list, let value):
            return ["--\(name)=\(try listText(value))"]
        case (.decoderLists, .object(let fields)):
            var arguments: [String] = []
            for field in fields { arguments.append("--\(name)=\(field.key)=\(try listText(field.value))") }
            return arguments
        case (.decoderLists, let value):
            throw wrongType("an object of decoder names to lists of MIME types", found: value.typeName)
        }
    }
}

/// The options as parsed and what they make: what `respdecode config` writes.
struct EffectiveOptions {
    var options: DecodeOptions
    var configuration: Configuration
    var logLevel: Logger.Level
}

extension DecodeOptions {
    /// The keys of a config file, in the order of the options in `--help` and of `respdecode config`'s output: one for
    /// each option but `--config` itself (a test checks this against ArgumentParser's list of the options).
    static let configKeys: [ConfigKey] = [
        ConfigKey("input", .value) { .string($0.configuration.input.rawValue) },
        ConfigKey("warc-types", .list) { effective in
            effective.configuration.warcTypes.map { types in .strings(warcTypeNames.filter(types.contains)) }
                ?? .string("all")
        },
        ConfigKey("digest-check", .flag) { .bool($0.configuration.verifyDigests) },
        ConfigKey("strict-digests", .flag) { .bool($0.configuration.strictDigests) },
        ConfigKey("sniff", .flag) { .bool($0.configuration.sniff) },
        ConfigKey("chain", .list) { .strings($0.configuration.chain.map(\.decoder.name)) },
        // Only the decoders whose types were replaced: a file that lists every decoder of the chain would make a
        // command line that narrows --chain an error (--accept must name decoders of the chain).
        ConfigKey("accept", .decoderLists) { effective in
            .object(effective.configuration.chain.filter { $0.acceptableTypes != $0.decoder.defaultAcceptableTypes }
                .map { ConfigFile.Field($0.decoder.name, .strings($0.acceptableTypes.map(\.description))) })
        },
        ConfigKey("status-codes", .list) { .string($0.configuration.acceptableStatusCodes.description) },
        ConfigKey("strict-types", .flag) { .bool($0.configuration.strictTypes) },
        ConfigKey("keep-nulls", .flag) { .bool(!$0.configuration.stripNulls) },
        ConfigKey("xml-keep-whitespace", .flag) { .bool($0.configuration.xmlKeepWhitespace) },
        ConfigKey("inflate", .flag) { .bool($0.configuration.imageInflate) },
        ConfigKey("scale", .value) { $0.configuration.imageScale.map(ConfigFile.Value.double) ?? .null },
        ConfigKey("max-image-pixels", .value) { .integer($0.configuration.limits.maxImagePixels) },
        ConfigKey("max-jpeg-scans", .value) { .integer($0.configuration.limits.maxJPEGScans) },
        ConfigKey("max-jpeg-scan-pixels", .value) { .integer($0.configuration.limits.maxJPEGScanPixels) },
        ConfigKey("max-image-memory", .value) { size($0.configuration.limits.maxImageMemory) },
        ConfigKey("max-image-chunk-bytes", .value) { size($0.configuration.limits.maxImageChunkBytes) },
        ConfigKey("output", .value) { .string($0.configuration.outputStyle.rawValue) },
        ConfigKey("max-header-bytes", .value) { size($0.configuration.limits.maxHeaderBytes) },
        ConfigKey("max-body-bytes", .value) { size($0.configuration.limits.maxBodyBytes) },
        ConfigKey("max-decoded-body-bytes", .value) { size($0.configuration.limits.maxDecodedBodyBytes) },
        ConfigKey("max-content-codings", .value) { .integer($0.configuration.limits.maxContentCodings) },
        ConfigKey("max-depth", .value) { .integer($0.configuration.limits.maxDepth) },
        ConfigKey("max-plist-objects", .value) { .integer($0.configuration.limits.maxPlistObjects) },
        ConfigKey("max-value-bytes", .value) { size($0.configuration.limits.maxValueBytes) },
        ConfigKey("max-error-body-bytes", .value) { size($0.configuration.limits.maxErrorBodyBytes) },
        ConfigKey("strict", .flag) { .bool($0.options.strict) },
        ConfigKey("log-level", .value) { .string($0.logLevel.rawValue) },
        ConfigKey("jobs", .value) { .integer($0.configuration.jobs) },
        ConfigKey("stats", .flag) { .bool($0.configuration.stats) },
        ConfigKey("stats-interval", .value) { $0.configuration.statsInterval.map(ConfigFile.Value.double) ?? .null },
    ]

    /// A size as people write it: whole GiB, MiB or KiB with their suffix, anything else as a number of bytes.
    static func size(_ bytes: Int) -> ConfigFile.Value {
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] where bytes > 0 && bytes % (1 << shift) == 0 {
            return .string("\(bytes >> shift)\(unit)")
        }
        return .integer(bytes)
    }

    /// The effective options as a config file, as `respdecode config` prints it.
    func effectiveConfigFile() throws -> String {
        let effective = EffectiveOptions(
            options: self, configuration: try makeConfiguration(), logLevel: try makeLogLevel())
        return ConfigFile.render(Self.configKeys.map { ConfigFile.Field($0.name, $0.effective(effective)) })
    }
}
