/// What the body decoders are told of a run's settings: their options and the limits they enforce, nothing else.
/// Each default is the initial value of its property, and only there: the command line's options, `respdecode
/// config` and docs/options.md read it from `DecoderOptions()`.
public struct DecoderOptions: Sendable {
    /// Remove null object members and null array elements from JSON values (AFNetworking 4's
    /// `removesKeysWithNullValues`); `--keep-nulls` turns it off.
    public var stripNulls = true
    /// Keep whitespace-only text between XML elements as text children (dropped when false).
    public var xmlKeepWhitespace = false
    /// Decode PNG and JPEG images in full to RGBA8 and report `decoded` (AFNetworking's
    /// `automaticallyInflatesResponseImage`); when false, metadata from the headers only.
    public var imageInflate = false
    /// AFNetworking's `imageScale`: when set, image values carry `pointWidth`/`pointHeight`; nil: not written.
    public var imageScale: Double? = nil
    /// Write the visible text of HTML pages (`text`, WET-like) in html values; `--no-html-text` leaves it out.
    public var htmlText = true
    /// Write the links of HTML pages (`links`, WAT-like) in html values; `--no-html-links` leaves them out.
    public var htmlLinks = true
    /// Detect the language of html and text values' text with CLD2 and write `languages` (`--detect-language`).
    public var detectLanguage = false
    /// The bounds against hostile input; decoders use the nesting, value size, plist and image ones.
    public var limits = Limits()

    public init() {}
}
