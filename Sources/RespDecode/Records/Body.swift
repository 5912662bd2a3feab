/// A record's body bytes: an array of its own, or bytes lent by the buffer its input was read into, which the body
/// keeps alive instead of copying them (``FramerInput/lend(_:)``). It reads like `[UInt8]`: a random-access
/// collection of bytes indexed from 0, with `withUnsafeBufferPointer`.
///
/// A lent body holds its lender's whole block of memory, however few of its bytes it is: ``lenderCapacity`` is what the
/// runtime's in-flight budget counts for the block (Runtime/OrderedOutput.swift).
public struct Body: Sendable {
    private var array: [UInt8]
    private var lender: (any ByteLender)?
    private var start = 0
    private var lentCount = 0

    /// A body holding `bytes`.
    public init(_ bytes: [UInt8] = []) {
        array = bytes
    }

    /// `count` bytes of `lender`'s memory from `start`.
    init(lentBy lender: any ByteLender, start: Int, count: Int) {
        array = []
        self.lender = lender
        self.start = start
        lentCount = count
    }

    /// Calls `body` with the bytes.
    @inline(__always)
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        guard let lender else { return try array.withUnsafeBufferPointer(body) }
        return try withExtendedLifetime(lender) {
            try body(UnsafeBufferPointer(start: lender.baseAddress + start, count: lentCount))
        }
    }

    /// The bytes as an array (a copy when they are lent).
    public var bytes: [UInt8] { lender == nil ? array : withUnsafeBufferPointer { Array($0) } }

    /// Whether the bytes are lent by an input's buffer (not copied out of it).
    public var isLent: Bool { lender != nil }

    /// The lender's block, when the bytes are lent: its identity and its size.
    var lenderIdentity: ObjectIdentifier? { lender.map { ObjectIdentifier($0) } }
    var lenderCapacity: Int { lender?.capacity ?? 0 }
}

/// Memory that bodies may borrow: a block that is no longer written once it is lent (FramerInput's storage).
protocol ByteLender: AnyObject, Sendable {
    var baseAddress: UnsafeMutablePointer<UInt8> { get }
    var capacity: Int { get }
}

extension Body: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { lender == nil ? array.count : lentCount }

    @inline(__always)
    public subscript(position: Int) -> UInt8 {
        guard let lender else { return array[position] }
        precondition(position >= 0 && position < lentCount, "index out of range")
        return lender.baseAddress[start + position]
    }

    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withUnsafeBufferPointer(body)
    }
}

extension Body: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: UInt8...) { self.init(elements) }
}

extension Body: Equatable {
    public static func == (lhs: Body, rhs: Body) -> Bool {
        lhs.withUnsafeBufferPointer { a in rhs.withUnsafeBufferPointer { b in a.elementsEqual(b) } }
    }

    public static func == (lhs: Body, rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBufferPointer { a in rhs.withUnsafeBufferPointer { b in a.elementsEqual(b) } }
    }

    public static func == (lhs: [UInt8], rhs: Body) -> Bool { rhs == lhs }
    public static func != (lhs: Body, rhs: [UInt8]) -> Bool { !(lhs == rhs) }
    public static func == (lhs: Body, rhs: [UInt8]?) -> Bool { rhs.map { lhs == $0 } ?? false }
}

extension Optional where Wrapped == Body {
    /// Whether there is a body and it holds `rhs` (for comparing a record's body, when there is one, with bytes).
    public static func == (lhs: Body?, rhs: [UInt8]) -> Bool { lhs.map { $0 == rhs } ?? false }
}

extension Body: CustomStringConvertible, CustomDebugStringConvertible {
    /// As the bytes' array prints, lent or not.
    public var description: String { bytes.description }
    public var debugDescription: String { bytes.debugDescription }
}
