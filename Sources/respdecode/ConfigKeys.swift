import ArgumentParser
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

/// The options as parsed and the configuration they make: what `respdecode config` writes.
struct EffectiveOptions {
    var options: DecodeOptions
    var configuration: Configuration
}

/// One option of decoding, all of it but its ArgumentParser declaration (the property of ``DecodeOptions`` it reads,
/// whose help and default --help shows): its config file key, the values it allows, how it sets a
/// ``Configuration``, and how `respdecode config` prints it back. ``DecodeOptions/table`` holds one for each option.
struct OptionRow: Sendable {
    /// The long option name, which is also the config file key.
    let name: String
    let shape: ConfigKey.Shape
    /// The values allowed, as said after "must be" ("from 1 to 1000000"); nil when every value of the option's type
    /// is (or the option checks its value itself).
    let range: String?
    /// Throws when the option's value is refused: out of range, or meaningless with the others.
    let check: @Sendable (DecodeOptions) throws -> Void
    /// Sets the option's value on a configuration (checked already).
    let apply: @Sendable (DecodeOptions, inout Configuration) throws -> Void
    /// The value that sets the option as it is.
    let effective: @Sendable (EffectiveOptions) -> ConfigFile.Value

    var configKey: ConfigKey { ConfigKey(name, shape, effective) }

    /// A flag that sets a Boolean of the configuration; `inverted`: the flag turns it off (`--keep-nulls`).
    static func flag(
        _ name: String, _ option: any KeyPath<DecodeOptions, Bool> & Sendable,
        _ setting: any WritableKeyPath<Configuration, Bool> & Sendable, inverted: Bool = false
    ) -> OptionRow {
        OptionRow(
            name: name, shape: .flag, range: nil, check: { _ in },
            apply: { $1[keyPath: setting] = $0[keyPath: option] != inverted },
            effective: { .bool($0.configuration[keyPath: setting] != inverted) })
    }

    /// A value that the configuration takes as it is (a format, a style, a set of status codes), or, with a range,
    /// a number that must be within it.
    static func value<Value: ConfigValue & Comparable>(
        _ name: String, _ option: any KeyPath<DecodeOptions, Value> & Sendable,
        _ setting: any WritableKeyPath<Configuration, Value> & Sendable, _ range: ClosedRange<Value>
    ) -> OptionRow {
        let text = "from \(boundText(range.lowerBound)) to \(boundText(range.upperBound))"
        return OptionRow(
            name: name, shape: .value, range: text,
            check: { if !range.contains($0[keyPath: option]) { throw ValidationError("--\(name) must be \(text)") } },
            apply: { $1[keyPath: setting] = $0[keyPath: option] },
            effective: { $0.configuration[keyPath: setting].configValue })
    }

    /// A value that the configuration takes as it is; every value of its type is allowed.
    static func value<Value: ConfigValue>(
        _ name: String, _ option: any KeyPath<DecodeOptions, Value> & Sendable,
        _ setting: any WritableKeyPath<Configuration, Value> & Sendable, shape: ConfigKey.Shape = .value
    ) -> OptionRow {
        OptionRow(
            name: name, shape: shape, range: nil, check: { _ in },
            apply: { $1[keyPath: setting] = $0[keyPath: option] },
            effective: { $0.configuration[keyPath: setting].configValue })
    }

    /// The largest size any option allows: no limit can make an allocation or an offset computation absurd.
    static let maxSize = 1 << 40

    /// A size in bytes, from 1 byte to ``maxSize``.
    static func size(
        _ name: String, _ option: any KeyPath<DecodeOptions, ByteSize> & Sendable,
        _ setting: any WritableKeyPath<Configuration, Int> & Sendable
    ) -> OptionRow {
        OptionRow(
            name: name, shape: .value, range: "from 1 byte to 1TiB",
            check: {
                let size = $0[keyPath: option]
                guard size.bytes >= 1 && size.bytes <= maxSize else {
                    throw ValidationError(
                        "--\(name) '\(size.written ?? size.description)' is not a size from 1 byte "
                            + "to 1TiB, like 4096, 64KiB or 64MiB")
                }
            },
            apply: { $1[keyPath: setting] = $0[keyPath: option].bytes },
            effective: { ByteSize($0.configuration[keyPath: setting]).configValue })
    }

    /// A number with no default value of its own (the configuration's is nil, or not a number of the option's):
    /// unset, the option leaves the configuration's; set, it must be within `range`. `effective` prints the
    /// configuration's value.
    static func optional<Value: ConfigValue & Comparable>(
        _ name: String, _ option: any KeyPath<DecodeOptions, Value?> & Sendable, _ range: ClosedRange<Value>,
        saying text: String? = nil, apply: @escaping @Sendable (Value, inout Configuration) -> Void,
        effective: @escaping @Sendable (Configuration) -> ConfigFile.Value
    ) -> OptionRow {
        let text = text ?? "from \(boundText(range.lowerBound)) to \(boundText(range.upperBound))"
        return OptionRow(
            name: name, shape: .value, range: text,
            check: { options in
                if let value = options[keyPath: option], !range.contains(value) {
                    throw ValidationError("--\(name) must be \(text)")
                }
            },
            apply: { options, configuration in options[keyPath: option].map { apply($0, &configuration) } },
            effective: { effective($0.configuration) })
    }

    /// A size in bytes with no default (the configuration's is nil): unset, none; set, from 0 to ``maxSize``.
    static func optionalSize(
        _ name: String, _ option: any KeyPath<DecodeOptions, ByteSize?> & Sendable,
        setting: any WritableKeyPath<Configuration, Int?> & Sendable
    ) -> OptionRow {
        OptionRow(
            name: name, shape: .value, range: "from 0 bytes to 1TiB",
            check: {
                guard let size = $0[keyPath: option] else { return }
                guard size.bytes >= 0 && size.bytes <= maxSize else {
                    throw ValidationError(
                        "--\(name) '\(size.written ?? size.description)' is not a size from 0 bytes "
                            + "to 1TiB, like 4096, 64KiB or 64MiB")
                }
            },
            apply: { $1[keyPath: setting] = $0[keyPath: option]?.bytes },
            effective: { $0.configuration[keyPath: setting].map { ByteSize($0).configValue } ?? .null })
    }

    /// An option of the command line that is no setting of the configuration (`--strict`, `--log-level`).
    static func commandLine(
        _ name: String, _ shape: ConfigKey.Shape, _ effective: @escaping @Sendable (DecodeOptions) -> ConfigFile.Value
    ) -> OptionRow {
        OptionRow(
            name: name, shape: shape, range: nil, check: { _ in }, apply: { _, _ in },
            effective: { effective($0.options) })
    }
}

extension DecodeOptions {
    /// The keys of a config file, in the order of the options in `--help` and of `respdecode config`'s output: one for
    /// each option but `--config` itself (a test checks this against ArgumentParser's list of the options).
    static var configKeys: [ConfigKey] { table.map(\.configKey) }

    /// The effective options as a config file, as `respdecode config` prints it.
    func effectiveConfigFile() throws -> String {
        let effective = EffectiveOptions(options: self, configuration: try makeConfiguration())
        return ConfigFile.render(Self.table.map { ConfigFile.Field($0.name, $0.effective(effective)) })
    }
}
