// Leak checks that other suites cannot disturb. Swift Testing runs suites of one process in
// parallel, so the number of open descriptors moves while a check runs: counting before and after
// failed whenever a neighbour held a few more descriptors at the end than at the start. Instead,
// each descriptor opened during the work is followed by what it is (its /proc/self/fd link and
// its device and inode): a neighbour's descriptor closes sooner or later, a leaked one never does.
import Foundation

/// One open descriptor of this process, told apart from a later one that reuses its number.
public struct OpenDescriptor: Hashable, Sendable, CustomStringConvertible {
    public let number: Int32
    public let target: String
    public let device: UInt
    public let inode: UInt

    public var description: String { "\(number) → \(target)" }

    /// The descriptors open right now.
    public static func all() -> Set<OpenDescriptor> {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        let own = dirfd(dir)
        var found: Set<OpenDescriptor> = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let number = Int32(name), number != own else { continue }
            var link = [CChar](repeating: 0, count: 512)
            let length = readlink("/proc/self/fd/\(name)", &link, link.count - 1)
            var info = stat()
            guard length >= 0, fstat(number, &info) == 0 else { continue }  // closed meanwhile
            let target = String(decoding: link.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found.insert(
                OpenDescriptor(number: number, target: target, device: UInt(info.st_dev), inode: UInt(info.st_ino)))
        }
        return found
    }
}

/// Runs `work` twice and returns the descriptors the second run opened and left open: those
/// opened meanwhile that stay open, unchanged, at every look for `settle` (a neighbouring suite's
/// close within that time; a leak never does). Empty when nothing leaked; the test prints what is
/// left. The first run is not measured: it may make what a process keeps until it exits (the
/// journal socket, a shared wake-up eventfd), which a second run reuses and a leak does not.
public func descriptorsLeft(
    by work: () throws -> Void, settle: Duration = .seconds(20)
) rethrows -> [OpenDescriptor] {
    try work()
    let before = OpenDescriptor.all()
    try work()
    var left = OpenDescriptor.all().subtracting(before)
    _ = waitUntil(timeout: settle, pollInterval: .milliseconds(10)) {
        left.formIntersection(OpenDescriptor.all())
        return left.isEmpty
    }
    return left.sorted { $0.number < $1.number }
}
