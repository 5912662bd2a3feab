/// The fallback when no decoder of the chain accepts the MIME type: AFNetworking's compound serializer falls back to
/// its base class, which returns the body as it is. The value is `{"text":"…"}` for valid UTF-8, else
/// `{"base64":"…"}`; an empty body has no value.
public struct RawDecoder: BodyDecoder {
    public let name = "raw"
    public let defaultAcceptableTypes: [MediaTypePattern] = []

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        guard !body.isEmpty else { return false }
        let mark = output.mark
        output.append(ascii: "{\"text\":")
        if output.appendJSONString(utf8: body) {
            output.append(UInt8(ascii: "}"))
        } else {
            output.rollback(to: mark)
            output.append(ascii: "{\"base64\":\"")
            output.appendBase64(body)
            output.append(ascii: "\"}")
        }
        return true
    }
}
