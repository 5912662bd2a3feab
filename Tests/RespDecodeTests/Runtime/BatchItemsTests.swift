import Testing

@testable import RespDecode

/// ``BatchItems`` manages its records' memory itself: these tests check what goes in comes out once, in order, through
/// every growth and reuse. Whether a record is freed exactly once (never twice, never leaked) is what the sanitizers
/// see: `scripts/sanitize address BatchItems` runs them under AddressSanitizer and LeakSanitizer (CI's ASan stage
/// does not select them; the runs so far are in RELIABILITY.md).
@Suite("Batch items")
struct BatchItemsTests {
    /// Record `i`: its body and URL (both on the heap) say which it is.
    private func record(_ i: Int) -> FramedItem {
        .record(
            ResponseRecord(
                offset: Int64(i), status: 200, body: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 100 + i),
                url: "https://example.test/\(i)/" + String(repeating: "x", count: 40)))
    }

    private func source(_ i: Int) -> ResultLine.Source {
        ResultLine.Source(seq: i, offset: Int64(i), input: "input \(i)")
    }

    @Test(arguments: [1, 63, 64, 65, 200, 2048])
    func recordsComeOutOnceInOrderThroughEveryGrowthAndReuse(count: Int) {
        var items = BatchItems(capacity: 64)
        for round in 0..<3 {
            for i in 0..<count { items.append(record(i + round), source(i)) }
            let held = items.count
            #expect(held == count)
            var seen: [Int] = []
            items.removeEach { item, source in
                guard case .record(let record) = item else {
                    Issue.record("item \(source.seq) is not a record")
                    return
                }
                let i = source.seq + round
                #expect(source.input == "input \(source.seq)")
                #expect(record.offset == Int64(i) && record.body.count == 100 + i)
                #expect(record.body.allSatisfy { $0 == UInt8(truncatingIfNeeded: i) })
                #expect(record.url == "https://example.test/\(i)/" + String(repeating: "x", count: 40))
                seen.append(source.seq)
            }
            #expect(seen == Array(0..<count), "round \(round)")
            let left = (items.isEmpty, items.count)
            #expect(left == (true, 0))
        }
    }

    /// A batch is full by its bodies' bytes; the in-flight budget counts what it holds: a lent body's whole block, once
    /// for the records in a row that it lends to.
    @Test func lentBodiesCountTheirBlockOnceInTheBudget() {
        var input = FramerInput(capacity: 4096)
        input.write([UInt8](repeating: 7, count: 3000))
        var other = FramerInput(capacity: 8192)
        other.write([UInt8](repeating: 8, count: 100))
        let bodies = [input.lend(0..<100), input.lend(100..<300), other.lend(0..<50), input.lend(300..<310)]
        let batch = Batch(capacity: 4)
        var revisits: RevisitDigests?
        for (i, body) in bodies.enumerated() {
            var record = ResponseRecord(offset: Int64(i), status: 200)
            record.body = body
            _ = batch.add(.record(record), seq: i, input: nil, revisits: &revisits)
        }
        _ = batch.add(
            .record(ResponseRecord(offset: 4, status: 200, body: [1, 2, 3])), seq: 4, input: nil, revisits: &revisits)
        #expect(batch.bytes == 100 + 200 + 50 + 10 + 3)
        #expect(batch.held == 4096 + 8192 + 4096 + 3, "a block again after another counts again")
        batch.reset()
        #expect(batch.bytes == 0 && batch.held == 0)
    }

    @Test func recordsStillHeldAreFreedByRemoveAllAndWhenTheItemsGo() {
        var items = BatchItems(capacity: 4)
        for i in 0..<100 { items.append(record(i), source(i)) }
        items.removeAll()
        let emptied = items.isEmpty
        #expect(emptied)
        // The memory is kept: the next records go in again, in order.
        for i in 0..<10 { items.append(record(i), source(i)) }
        var first: Int?
        items.removeEach { _, source in first = first ?? source.seq }
        #expect(first == 0)
        // Held when the items go: their deinit frees them (LeakSanitizer would name any left).
        for i in 0..<70 { items.append(record(i), source(i)) }
        let held = items.count
        #expect(held == 70)
    }

    @Test func aBatchTakesRecordsPastItsFirstRoomUntilItIsFull() {
        let batch = Batch(capacity: 64)
        var revisits: RevisitDigests?
        // 300 records of 100-399 body bytes: under both of a batch's bounds (records and bytes).
        for i in 0..<300 {
            #expect(!batch.add(record(i), seq: i, input: nil, revisits: &revisits), "record \(i)")
        }
        let held = batch.items.count
        #expect(held == 300)
        // By records: full at JobPool.batchRecords.
        let small = Batch(capacity: 1)
        var full = 0
        for i in 0..<JobPool.batchRecords {
            if small.add(
                .record(ResponseRecord(offset: Int64(i), status: 204)), seq: i, input: nil, revisits: &revisits)
            {
                full = i + 1
            }
        }
        let smallHeld = small.items.count
        #expect(full == JobPool.batchRecords && smallHeld == JobPool.batchRecords)
        batch.reset()
        let emptied = batch.items.isEmpty
        #expect(emptied)
    }
}
