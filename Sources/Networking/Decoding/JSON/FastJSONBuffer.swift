/// A growable buffer of plain values that the decoder manages by hand.
///
/// It lives inside `FastJSONScratch`, which is reached through a pointer, so reads and writes cost no
/// exclusivity checks, bounds checks or copy-on-write checks (a Swift array in a class property costs
/// all three). The owner calls `release()` once; indices are kept valid by the callers.
struct FastJSONBuffer<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 4)
        base = UnsafeMutablePointer<Element>.allocate(capacity: self.capacity)
    }

    func release() {
        base.deallocate()
    }

    @inline(__always) subscript(index: Int) -> Element {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }

    @inline(__always) mutating func append(_ element: Element) {
        if count == capacity { grow(to: count &+ 1) }
        (base + count).initialize(to: element)
        count &+= 1
    }

    /// Appends `n` copies of `element`.
    mutating func append(repeating element: Element, count n: Int) {
        reserve(n)
        (base + count).initialize(repeating: element, count: n)
        count &+= n
    }

    /// Appends the contents of a buffer.
    mutating func append(contentsOf source: UnsafeBufferPointer<Element>) {
        guard let start = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        (base + count).initialize(from: start, count: source.count)
        count &+= source.count
    }

    /// Makes room for `extra` more elements.
    @inline(__always) mutating func reserve(_ extra: Int) {
        if capacity &- count < extra { grow(to: count &+ extra) }
    }

    /// Forgets everything from `newCount` on (plain values need no deinitialization).
    @inline(__always) mutating func truncate(to newCount: Int) {
        if newCount < count { count = Swift.max(newCount, 0) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity &* 2
        while newCapacity < needed { newCapacity &*= 2 }
        let newBase = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}
