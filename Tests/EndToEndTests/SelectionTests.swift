import Foundation
import Testing

/// `--select-…` and `--fields` on the built binary (docs/output.md#selecting-records, docs/output.md#choosing-the-keys):
/// a filtered run keeps the unfiltered run's lines of the records it selects, byte for byte, and every failure; a
/// projected run keeps the keys asked for with the whole line's values.
extension EndToEndTests {
    @Suite("Selection and fields")
    struct SelectionTests {
        static func run(_ arguments: [String]) throws -> EndToEndTests.Run {
            let result = try EndToEndTests.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result
        }

        static func texts(_ data: Data) -> [String] { TrafficTests.texts(data) }

        static func object(_ line: String) throws -> NSDictionary {
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
        }

        /// The unfiltered run's lines that `keep` selects (by the line's object), and every failure line.
        static func expectFiltered(
            _ arguments: [String], on sample: String, keep: (NSDictionary) -> Bool
        ) throws {
            let full = texts(try run([sample]).stdout)
            let filtered = texts(try run(arguments + [sample]).stdout)
            let expected = try full.filter { line in
                let object = try object(line)
                return keep(object) || object["decoder"] as? String == "none" && object["status"] == nil
            }
            #expect(filtered == expected, "\(arguments) on \(sample)")
            #expect(!filtered.isEmpty && filtered.count < full.count, "\(arguments) selects some records, not all")
        }

        @Test func selectTypeKeepsTheImageLinesAndTheFailure() throws {
            try Self.expectFiltered(["--select-type", "image/*"], on: "samples/traffic.warc.gz") {
                ($0["contentType"] as? String)?.hasPrefix("image/") == true
            }
        }

        @Test func selectStatusClasses() throws {
            try Self.expectFiltered(["--select-status", "4xx,5xx"], on: "samples/capture.http") {
                ($0["status"] as? Int).map { $0 >= 400 } == true
            }
        }

        @Test func selectURLGlobAndRegex() throws {
            try Self.expectFiltered(["--select-url", "https://shop.example/*"], on: "samples/traffic.warc.gz") {
                ($0["url"] as? String)?.hasPrefix("https://shop.example/") == true
            }
            try Self.expectFiltered(["--select-url-regex", "\\.(png|jpg)$"], on: "samples/traffic.warc.gz") {
                guard let url = $0["url"] as? String else { return false }
                return url.hasSuffix(".png") || url.hasSuffix(".jpg")
            }
        }

        @Test func selectBodySizes() throws {
            try Self.expectFiltered(
                ["--select-min-body-bytes", "50", "--select-max-body-bytes", "100"], on: "samples/traffic.warc.gz"
            ) {
                ($0["bodyBytes"] as? Int).map { (50...100).contains($0) } == true
            }
        }

        /// Together: a record must pass every filter.
        @Test func filtersCombine() throws {
            try Self.expectFiltered(
                ["--select-status", "200", "--select-type", "application/*", "--select-url-regex", "/api/"],
                on: "samples/traffic.warc.gz"
            ) {
                $0["status"] as? Int == 200 && ($0["contentType"] as? String)?.hasPrefix("application/") == true
                    && ($0["url"] as? String)?.contains("/api/") == true
            }
        }

        /// ndjson input: one line per input line, a stub for each skipped record, the others as unfiltered.
        @Test func ndjsonInputGetsStubs() throws {
            let full = Self.texts(try Self.run(["--input", "ndjson", "samples/traffic.ndjson"]).stdout)
            let filtered = Self.texts(
                try Self.run(["--input", "ndjson", "--select-url", "*/api/*", "samples/traffic.ndjson"]).stdout)
            #expect(filtered.count == full.count)
            var stubs = 0
            for (a, b) in zip(full, filtered) {
                let object = try Self.object(a)
                if (object["url"] as? String)?.contains("/api/") == true || object["status"] == nil {
                    #expect(a == b)
                } else {
                    stubs += 1
                    let stub = try Self.object(b)
                    #expect(stub["skipped"] as? Bool == true)
                    #expect(stub["skippedBy"] as? String == "select-url")
                    #expect(stub["seq"] as? Int == object["seq"] as? Int)
                    #expect(stub["offset"] as? Int == object["offset"] as? Int)
                    #expect(stub["id"] as? String == object["id"] as? String)
                    #expect(Set(stub.allKeys as! [String]) == ["seq", "offset", "input", "id", "skipped", "skippedBy"])
                }
            }
            #expect(stubs > 0)
        }

        @Test func statisticsCountSkippedRecordsApart() throws {
            let result = try Self.run(["--stats", "--select-status", "2xx", "samples/capture.http"])
            #expect(result.stderr.contains("respdecode: 10 records,"), "\(result.stderr)")
            #expect(result.stderr.contains("skipped by --select-status 2 "), "\(result.stderr)")
            // --strict looks at the records decoded only: skipped failures do not fail it.
            #expect(try EndToEndTests.run(["--strict", "samples/documents.http"]).status == 1)
            #expect(
                try EndToEndTests.run(["--strict", "--select-status", "204", "samples/documents.http"]).status == 0)
        }

        static let fieldLists = [
            "url,status", "seq,ok,error", "value", "status,contentType,bodyBytes,decodedBytes,digest,warnings",
            "body,trailers,decoder", "offset,length,input,id,warcType,warcRecordId,warcDate,sniffed",
            // No key that needs decoding: written from the record as framed.
            "url,status,contentType,contentEncoding,bodyBytes,digest,trailers",
        ]

        /// Every sample, with the default chain and AFNetworking's: the projected line is the whole line's object
        /// with only the keys asked for, and the keys keep the line's order.
        @Test(arguments: [[String](), ["--chain", "json,xml,plist,image"]])
        func fieldsProjectEveryLine(chain: [String]) throws {
            for sample in EngineTests.samples {
                let options = chain + (sample.hasSuffix(".ndjson") ? ["--sniff"] : [])
                let full = Self.texts(try Self.run(options + [sample]).stdout)
                for list in Self.fieldLists {
                    let names = list.split(separator: ",").map(String.init)
                    let projected = Self.texts(try Self.run(options + ["--fields", list, sample]).stdout)
                    #expect(projected.count == full.count, "\(sample) --fields \(list)")
                    for (whole, line) in zip(full, projected) {
                        let expected = try Self.object(whole).mutableCopy() as! NSMutableDictionary
                        for key in expected.allKeys as! [String] where !names.contains(key) {
                            expected.removeObject(forKey: key)
                        }
                        #expect(try Self.object(line) == expected, "\(sample) --fields \(list): \(line)")
                        // Order: the keys appear in the whole line's order.
                        let positions = (expected.allKeys as! [String]).compactMap {
                            line.range(of: "\"\($0)\":").map { line.distance(from: line.startIndex, to: $0.lowerBound) }
                        }
                        #expect(positions.count == expected.count)
                        let keysInLine = (expected.allKeys as! [String]).sorted {
                            line.range(of: "\"\($0)\":")!.lowerBound < line.range(of: "\"\($1)\":")!.lowerBound
                        }
                        let keysInWhole = keysInLine.sorted {
                            whole.range(of: "\"\($0)\":")!.lowerBound < whole.range(of: "\"\($1)\":")!.lowerBound
                        }
                        #expect(keysInLine == keysInWhole, "\(sample): \(line)")
                    }
                }
            }
        }

        /// `--fields` naming no key that needs decoding: nothing is decoded, and the statistics say so.
        @Test func fieldsThatNeedNoDecodingDecodeNothing() throws {
            let result = try Self.run(["--stats", "--fields", "url,status", "samples/capture.http"])
            #expect(result.stderr.contains("respdecode: 1 records, 0 ok, 1 errors"), "\(result.stderr)")
            #expect(result.stderr.contains("  11 more written without decoding"), "\(result.stderr)")
            #expect(Self.texts(result.stdout).count == 12)
            // --strict: no decoded line says "ok": false; the framing failure still does.
            #expect(try EndToEndTests.run(["--strict", "--fields", "url", "samples/capture.http"]).status == 1)
            #expect(try EndToEndTests.run(["--strict", "--fields", "url", "samples/documents.http"]).status == 0)
            #expect(try EndToEndTests.run(["--strict", "--fields", "url,ok", "samples/documents.http"]).status == 1)
        }

        @Test func fieldsWithPrettyOutputAndAConfigFile() throws {
            let pretty = try Self.run(["--output", "pretty", "--fields", "url,status", "samples/traffic.har"])
            let text = String(decoding: pretty.stdout, as: UTF8.self)
            #expect(text.hasPrefix("{\n  \"url\": "), "\(text)")
            #expect(!text.contains("\"seq\""))
            // Skipped records have no pretty object either, not an empty one.
            let selected = try Self.run([
                "--output", "pretty", "--select-type", "image/*", "--fields", "seq", "samples/traffic.warc.gz",
            ])
            #expect(
                String(decoding: selected.stdout, as: UTF8.self)
                    == "{\n  \"seq\": 3\n}\n{\n  \"seq\": 4\n}\n{\n  \"seq\": 8\n}\n")
            let config = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-select-\(getpid()).json")
            defer { try? FileManager.default.removeItem(at: config) }
            try Data(#"{"fields": ["url", "status"], "select-type": ["image/*"], "select-status": "2xx"}"#.utf8)
                .write(to: config)
            let viaFile = Self.texts(try Self.run(["--config", config.path, "samples/traffic.warc.gz"]).stdout)
            let viaLine = Self.texts(
                try Self.run([
                    "--fields", "url,status", "--select-type", "image/*", "--select-status", "2xx",
                    "samples/traffic.warc.gz",
                ]).stdout)
            #expect(viaFile == viaLine)
            #expect(viaFile.first == #"{"url":"https://cdn.example/dot.png","status":200}"#)
        }

        @Test(arguments: [
            (["--select-url-regex", "a("], "is not a POSIX extended regular expression"),
            (["--fields", "url,nope"], "known keys: seq,offset,length,input,id,url,"),
            (["--fields", "url", "--output", "cdxj"], "--output cdxj writes index lines"),
            (["--select-type", "html"], "is not a MIME type pattern"),
            (["--select-status", "2x"], "--select-status"),
            (["--select-min-body-bytes", "lots"], "is not a size"),
        ])
        func badValuesAreUsageErrors(arguments: [String], message: String) throws {
            let result = try EndToEndTests.run(arguments + ["samples/capture.http"])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
