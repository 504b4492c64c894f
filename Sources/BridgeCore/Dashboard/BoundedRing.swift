// The one ring buffer of the dashboard's histories (DashboardTrack, FixHistory): oldest first, at
// most `capacity` elements in storage allocated once, so a history fed for days costs what its
// window costs.

/// A first-in first-out ring of at most `capacity` elements; appending to a full ring drops the
/// oldest.
struct BoundedRing<Element: Sendable & Equatable>: Sendable, Equatable {
    let capacity: Int
    /// `storage[(head + i) % capacity]` is the i-th element, oldest first.
    private var storage: [Element] = []
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        precondition(capacity >= 1, "a ring needs room for one element")
        self.capacity = capacity
    }

    var isEmpty: Bool { count == 0 }

    /// The i-th element, oldest first.
    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "ring index out of range")
            return storage[(head + index) % capacity]
        }
        set {
            precondition(index >= 0 && index < count, "ring index out of range")
            storage[(head + index) % capacity] = newValue
        }
    }

    var first: Element? { isEmpty ? nil : self[0] }
    var last: Element? { isEmpty ? nil : self[count - 1] }

    /// The elements, oldest first.
    var elements: [Element] { (0..<count).map { self[$0] } }

    /// Adds `element` as the newest, dropping the oldest when the ring is full.
    mutating func append(_ element: Element) {
        if storage.isEmpty { storage.reserveCapacity(capacity) }
        if count == capacity { removeFirst() }
        let slot = (head + count) % capacity
        if slot < storage.count { storage[slot] = element } else { storage.append(element) }
        count += 1
    }

    /// Drops the oldest element (none when empty).
    mutating func removeFirst() {
        guard count > 0 else { return }
        head = (head + 1) % capacity
        count -= 1
        if count == 0 { head = 0 }
    }

    /// Empties the ring, keeping its storage.
    mutating func removeAll() {
        head = 0
        count = 0
    }

    static func == (lhs: BoundedRing, rhs: BoundedRing) -> Bool {
        lhs.capacity == rhs.capacity && lhs.elements == rhs.elements
    }
}
