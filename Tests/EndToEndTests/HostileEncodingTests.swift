import CBrotliEncoder
import CZlib
import CZstd
import Foundation
import Testing

/// Hostile Content-Encodings (docs/reliability.md#content-encoding) through the real binary, within the documents'
/// budgets
/// (1 s of CPU time, 256 MB resident): each ratio bomb is one `limitExceeded` line, nothing on stderr, exit 0.
/// Nested in the documents' suite so that these run one at a time with the other memory-limited tests.
extension HostileDocumentTests {
    @Suite("Hostile encodings")
    struct HostileEncodingTests {
        // MARK: Compressors, streaming 1 MiB slices of one repeated byte (a 1 GB bomb never exists uncompressed)

        static let slice = 1 << 20

        /// gzip (windowBits 31) of `count` copies of `byte`, or of `data` when given.
        static func gzip(repeating byte: UInt8 = 0, count: Int = 0, data: [UInt8]? = nil, level: Int32 = 9) -> [UInt8] {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            defer {
                deflateEnd(stream)
                stream.deallocate()
            }
            _ = deflateInit2_(
                stream, level, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size))
            let block = data ?? [UInt8](repeating: byte, count: min(count, slice))
            let total = data?.count ?? count
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var left = total
            repeat {
                let take = min(left, block.count)
                left -= take
                block.withUnsafeBufferPointer { input in
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                    stream.pointee.avail_in = UInt32(take)
                    repeat {
                        buffer.withUnsafeMutableBufferPointer { out in
                            stream.pointee.next_out = out.baseAddress
                            stream.pointee.avail_out = UInt32(out.count)
                            _ = deflate(stream, left == 0 ? Z_FINISH : Z_NO_FLUSH)
                            result += out.prefix(out.count - Int(stream.pointee.avail_out))
                        }
                    } while stream.pointee.avail_out == 0
                }
            } while left > 0
            return result
        }

        /// One zstd frame of `count` copies of `byte`, streamed (the content size is not in the header).
        static func zstd(repeating byte: UInt8, count: Int, level: Int32, windowLog: Int32? = nil) -> [UInt8] {
            let context = ZSTD_createCCtx()
            defer { ZSTD_freeCCtx(context) }
            _ = ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
            if let windowLog { _ = ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog) }
            let block = [UInt8](repeating: byte, count: min(count, slice))
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            func feed(_ take: Int, _ mode: ZSTD_EndDirective) {
                block.withUnsafeBytes { input in
                    var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: take, pos: 0)
                    var remaining = 0
                    repeat {
                        buffer.withUnsafeMutableBytes { out in
                            var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                            remaining = ZSTD_compressStream2(context, &outBuffer, &inBuffer, mode)
                            result += out.prefix(outBuffer.pos)
                        }
                    } while ZSTD_isError(remaining) == 0
                        && (mode == ZSTD_e_end ? remaining != 0 : inBuffer.pos < inBuffer.size)
                }
            }
            // Everything as "continue", then an empty "end": the encoder never learns the size, so it keeps the
            // window it was given.
            var left = count
            while left > 0 {
                let take = min(left, block.count)
                left -= take
                feed(take, ZSTD_e_continue)
            }
            feed(0, ZSTD_e_end)
            return result
        }

        /// A brotli stream of `count` copies of `byte`.
        static func brotli(
            repeating byte: UInt8, count: Int, quality: UInt32, lgwin: UInt32, largeWindow: Bool = false
        ) -> [UInt8] {
            let state = BrotliEncoderCreateInstance(nil, nil, nil)
            defer { BrotliEncoderDestroyInstance(state) }
            if largeWindow { _ = BrotliEncoderSetParameter(state, BROTLI_PARAM_LARGE_WINDOW, 1) }
            _ = BrotliEncoderSetParameter(state, BROTLI_PARAM_QUALITY, quality)
            _ = BrotliEncoderSetParameter(state, BROTLI_PARAM_LGWIN, lgwin)
            let block = [UInt8](repeating: byte, count: min(count, slice))
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var left = count
            repeat {
                let take = min(left, block.count)
                left -= take
                let operation = left == 0 ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS
                block.withUnsafeBufferPointer { input in
                    var availableIn = take
                    var nextIn = input.baseAddress
                    repeat {
                        buffer.withUnsafeMutableBufferPointer { out in
                            var availableOut = out.count
                            var nextOut = out.baseAddress
                            _ = BrotliEncoderCompressStream(
                                state, operation, &availableIn, &nextIn, &availableOut,
                                &nextOut, nil)
                            result += out.prefix(out.count - availableOut)
                        }
                    } while availableIn > 0 || BrotliEncoderHasMoreOutput(state) == BROTLI_TRUE
                        || (left == 0 && BrotliEncoderIsFinished(state) == BROTLI_FALSE)
                }
            } while left > 0
            return result
        }

        // MARK: Running the binary

        static func response(_ body: [UInt8], encoding: String, type: String = "application/json") -> Data {
            Data(
                ("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Encoding: \(encoding)\r\n"
                    + "Content-Length: \(body.count)\r\n\r\n").utf8) + Data(body)
        }

        /// HostileDocumentTests.runLimited on whole responses (built with a Content-Encoding field).
        static func runLimited(_ input: Data, name: String, arguments: [String] = []) throws -> [[String: Any]] {
            try HostileDocumentTests.runLimited(input: input, name: name, arguments: arguments)
        }

        /// The single line for one response with `body` under `encoding`.
        static func run(_ body: [UInt8], encoding: String, name: String) throws -> [String: Any] {
            let lines = try runLimited(response(body, encoding: encoding), name: name)
            #expect(lines.count == 1, "\(name): \(lines.count) lines")
            return try #require(lines.first)
        }

        static func error(_ line: [String: Any]) -> (code: String?, message: String) {
            let error = line["error"] as? [String: Any]
            return (error?["code"] as? String, error?["message"] as? String ?? "")
        }

        static func expectLimitExceeded(_ body: [UInt8], encoding: String, name: String) throws {
            let line = try run(body, encoding: encoding, name: name)
            #expect(error(line).code == "limitExceeded", "\(name): \(line)")
            #expect(error(line).message.contains("maxDecodedBodyBytes"), "\(name): \(error(line).message)")
            #expect(line["decoder"] as? String == "none")
            #expect((line["body"] as? [String: Any])?["bytes"] as? Int == body.count, "\(name): the encoded bytes")
        }

        // MARK: Ratio bombs: 1 GB of zeros

        static let gigabyte = 1_000_000_000

        @Test func gzipBombs() throws {
            let bomb = Self.gzip(repeating: 0, count: Self.gigabyte)
            #expect(bomb.count < 1_100_000)
            try Self.expectLimitExceeded(bomb, encoding: "gzip", name: "gzip -9 bomb")
            let twice = Self.gzip(data: bomb)
            #expect(twice.count < 4_000)
            try Self.expectLimitExceeded(twice, encoding: "gzip, gzip", name: "gzip∘gzip bomb")
        }

        @Test func zstdBomb() throws {
            let bomb = Self.zstd(repeating: 0, count: Self.gigabyte, level: 19)
            #expect(bomb.count < 40_000)
            try Self.expectLimitExceeded(bomb, encoding: "zstd", name: "zstd -19 bomb")
        }

        @Test func brotliBomb() throws {
            // Quality 9 with a 2^24 window: 758 bytes for 1 GB in under a second (quality 11 gives 788 bytes in 12 s;
            // the unit tests use that one).
            let bomb = Self.brotli(repeating: 0, count: Self.gigabyte, quality: 9, lgwin: 24)
            #expect(bomb.count < 1_000)
            try Self.expectLimitExceeded(bomb, encoding: "br", name: "br bomb")
        }

        @Test func aBombDoesNotDisturbTheRecordsAroundIt() throws {
            let json = Array(#"{"n":1}"#.utf8)
            let bomb = Self.zstd(repeating: 0, count: 200_000_000, level: 3)
            let input =
                Self.response(Self.gzip(data: json), encoding: "gzip") + Self.response(bomb, encoding: "zstd")
                + Self.response(Self.gzip(data: json), encoding: "gzip")
            let lines = try Self.runLimited(input, name: "bomb between records")
            #expect(lines.map { $0["ok"] as? Bool } == [true, false, true])
            #expect(lines.count == 3 && Self.error(lines[1]).code == "limitExceeded")
        }

        @Test func theCapAndTheLayerLimitAreOptions() throws {
            let json = Array(#"{"a":[1,2,3]}"#.utf8)
            let body = Self.gzip(data: json)
            let lines = try Self.runLimited(
                Self.response(body, encoding: "gzip"), name: "small cap",
                arguments: ["--max-decoded-body-bytes", "\(json.count - 1)"])
            #expect(lines.count == 1 && Self.error(lines[0]).code == "limitExceeded")
            let exact = try Self.runLimited(
                Self.response(body, encoding: "gzip"), name: "exact cap",
                arguments: ["--max-decoded-body-bytes", "\(json.count)"])
            #expect(exact.count == 1 && exact[0]["ok"] as? Bool == true)

            var five = json
            for _ in 0..<5 { five = Self.gzip(data: five) }
            let list = "gzip, gzip, gzip, gzip, gzip"
            let limited = try Self.run(five, encoding: list, name: "five layers")
            #expect(Self.error(limited).code == "limitExceeded")
            #expect(Self.error(limited).message.contains("maxContentCodings"))
            let allowed = try Self.runLimited(
                Self.response(five, encoding: list), name: "five layers allowed",
                arguments: ["--max-content-codings", "5"])
            #expect(allowed.count == 1 && allowed[0]["ok"] as? Bool == true)
        }

        @Test func wideZstdWindowsAreRefused() throws {
            // `zstd --long=27`: a 2^27 window in the frame header; RFC 9659 allows HTTP decoders 8 MiB.
            let wide = Self.zstd(repeating: 0x41, count: 1_000_000, level: 3, windowLog: 27)
            let line = try Self.run(wide, encoding: "zstd", name: "zstd window 2^27")
            #expect(Self.error(line).code == "contentDecodingFailed", "\(line)")
        }

        // MARK: Ordinary bodies

        @Test func aGzipJSONBodyDecodes() throws {
            let json = Array(#"{"user":{"id":42,"name":"Ada"},"tags":["a","b"]}"#.utf8)
            let body = Self.gzip(data: json)
            let line = try Self.run(body, encoding: "gzip", name: "gzip json")
            #expect(line["ok"] as? Bool == true)
            #expect(line["decoder"] as? String == "json")
            #expect(line["contentEncoding"] as? [String] == ["gzip"])
            #expect(line["bodyBytes"] as? Int == body.count)
            #expect(line["decodedBytes"] as? Int == json.count)
            let value = try #require(line["value"] as? [String: Any])
            #expect((value["user"] as? [String: Any])?["name"] as? String == "Ada")
            #expect(line["warnings"] == nil)
        }

        @Test func plainJSONDeclaredGzipDecodesWithAWarning() throws {
            // Firebase's case (mitmproxy issue 8124): JSON sent as it is under Content-Encoding: gzip.
            let json = Array(#"{"ok":true,"items":[1,2,3]}"#.utf8)
            let line = try Self.run(json, encoding: "gzip", name: "plain json as gzip")
            #expect(line["ok"] as? Bool == true)
            #expect(line["decoder"] as? String == "json")
            #expect(line["decodedBytes"] == nil)
            #expect((line["value"] as? [String: Any])?["ok"] as? Bool == true)
            let warnings = try #require(line["warnings"] as? [String])
            #expect(warnings.contains { $0.contains("plainly not gzip") }, "\(warnings)")
        }
    }
}
