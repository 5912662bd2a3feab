public import ArgumentParser
public import Logging
public import RespDecode

/*
 The types of the options' values. Each parses its argument (ArgumentParser lists the choices of an enumeration in
 --help and in its error), prints its default in --help, and says how `respdecode config` writes it (ConfigValue).
 */

/// A value as a config file writes it.
protocol ConfigValue: Sendable {
    var configValue: ConfigFile.Value { get }
}

extension Int: ConfigValue {
    var configValue: ConfigFile.Value { .integer(self) }
}

extension Double: ConfigValue {
    var configValue: ConfigFile.Value { .double(self) }
}

/*
 Each type says its choices and its default's text itself (`allValueStrings`, `defaultValueDescription`), the same
 text as ArgumentParser's defaults would give. Those defaults are generic: they build a key path for each choice and
 describe a value through the runtime's casts (each cast's first time a scan of every conformance record of the
 binary), on every run, as ArgumentParser builds the argument set to parse. Written out here, an empty run takes 1.4
 million instructions fewer (callgrind: 36.17 -> 34.80 million).
 */

/// An enumeration of strings as an option's value: its raw values are its choices.
public protocol RawValueArgument: ExpressibleByArgument, CaseIterable, RawRepresentable<String> {}

extension RawValueArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public var defaultValueDescription: String { rawValue }
}

extension InputFormat: RawValueArgument, ConfigValue {
    var configValue: ConfigFile.Value { .string(rawValue) }
}

extension OutputStyle: RawValueArgument, ConfigValue {
    var configValue: ConfigFile.Value { .string(rawValue) }
}

// swift-log's level read as an argument here: both packages are ours to depend on, neither declares it.
// swift-format-ignore: AvoidRetroactiveConformances
extension Logger.Level: @retroactive ExpressibleByArgument, RawValueArgument, ConfigValue {
    var configValue: ConfigFile.Value { .string(rawValue) }
}

extension StatusCodeSet: ExpressibleByArgument, ConfigValue {
    /// Codes and inclusive ranges: `200-299,304`.
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { description }
    var configValue: ConfigFile.Value { .string(description) }
}

/// A number of bytes as people write it: `4096`, `64KiB`, `64MiB`, `1G` (``ByteCount``); written back with the
/// largest unit that divides it exactly (`64KiB`, `8000000`).
///
/// Any argument parses, so that the option's row can say what a size is: text that is no size has no bytes
/// (``bytes`` is -1) and keeps what was written for the message.
struct ByteSize: Hashable, Sendable, ExpressibleByArgument, CustomStringConvertible, ConfigValue {
    var bytes: Int
    /// The argument as written, when this came from one.
    var written: String?

    init(_ bytes: Int) { self.bytes = bytes }

    var defaultValueDescription: String { description }

    init(argument: String) {
        bytes = ByteCount.parse(argument) ?? -1
        written = argument
    }

    var description: String {
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return String(bytes)
    }

    /// A number when there is no unit, as people write one in JSON.
    var configValue: ConfigFile.Value {
        let text = description
        return Int(text) == nil ? .string(text) : .integer(bytes)
    }
}

/// A bound as the messages and docs/options.md write it: `1000`, not `1000.0`.
func boundText<Value>(_ value: Value) -> String {
    if let double = value as? Double, double.rounded() == double, abs(double) < 1e15 { return String(Int(double)) }
    return "\(value)"
}
