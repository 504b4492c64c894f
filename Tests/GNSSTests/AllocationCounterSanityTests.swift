// Sanity checks for TestSupport's allocation counter (the CAllocationCounter malloc interposer):
// it must see real allocations, see none where there are none, and count per thread. If these
// fail, every zero-allocation test in the package is meaningless.
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// Escapes values so the optimizer cannot drop or stack-promote the allocations under test.
nonisolated(unsafe) private var sink: [Int] = []

@Suite("Allocation counter", .tags(.unit))
struct AllocationCounterSanityTests {
    @Test("An Array allocation is counted")
    func arrayIsCounted() {
        let count = countAllocations {
            sink = Array(repeating: 0, count: 1000)
        }
        #expect(count >= 1)
        sink = []
    }

    @Test("A pure integer loop counts zero")
    func integerLoopIsZero() {
        var total = 0
        let count = countAllocations {
            for i in 0..<100_000 {
                total &+= i &* 31
            }
        }
        #expect(count == 0)
        #expect(total != 0)
    }

    @Test("Each C allocation entry point counts exactly once")
    func cEntryPoints() {
        var pointers: [UnsafeMutableRawPointer?] = []
        pointers.reserveCapacity(16)
        var memalignResult: Int32 = -1
        let count = countAllocations {
            pointers.append(malloc(24))
            pointers.append(calloc(3, 8))
            pointers.append(realloc(nil, 40))
            var aligned: UnsafeMutableRawPointer?
            memalignResult = posix_memalign(&aligned, 64, 100)
            pointers.append(aligned)
            pointers.append(aligned_alloc(128, 256))
        }
        #expect(count == 5)
        #expect(memalignResult == 0)
        #expect(pointers.allSatisfy { $0 != nil })
        #expect(pointers.compactMap { $0 }.allSatisfy { UInt(bitPattern: $0) % 16 == 0 })
        for pointer in pointers { free(pointer) }
    }

    @Test("posix_memalign rejects a bad alignment without allocating")
    func posixMemalignBadAlignment() {
        var result: Int32 = 0
        var pointer: UnsafeMutableRawPointer?
        let count = countAllocations {
            result = posix_memalign(&pointer, 24, 100)
        }
        #expect(result == EINVAL)
        #expect(pointer == nil)
        #expect(count == 0)
    }

    @Test("Allocations on another thread are not counted")
    func otherThreadsAreNotCounted() {
        final class Shared: Sendable {
            let started = Atomic<Bool>(false)
            let stop = Atomic<Bool>(false)
            let otherCount = Atomic<UInt64>(UInt64.max)
        }
        let shared = Shared()
        let thread = Thread {
            let count = countAllocations {
                shared.started.store(true, ordering: .releasing)
                var local: [Int] = []
                while !shared.stop.load(ordering: .acquiring) {
                    local = Array(repeating: local.count, count: 64)
                }
                withExtendedLifetime(local) {}
            }
            shared.otherCount.store(count, ordering: .releasing)
        }
        thread.start()
        while !shared.started.load(ordering: .acquiring) { sched_yield() }

        var total = 0
        let count = countAllocations {
            for i in 0..<2_000_000 {
                total &+= i
            }
        }
        shared.stop.store(true, ordering: .releasing)
        while shared.otherCount.load(ordering: .acquiring) == UInt64.max { sched_yield() }

        #expect(count == 0)
        #expect(total != 0)
        #expect(shared.otherCount.load(ordering: .acquiring) > 0)
    }

    /// Swift Testing hooks `throw` to capture backtraces, which allocates; `make test` turns that
    /// off for the allocation run, and then a caught typed error must cost nothing.
    @Test(
        "A caught typed throw allocates nothing once Swift Testing's error backtraces are off",
        .enabled(if: isOptimizedBuild, Comment(rawValue: allocationTestsNeedOptimizedBuild)),
        .enabled(if: getenv("SWT_SWIFT_ERROR_BACKTRACING_ENABLED").map { String(cString: $0) } == "0"))
    func caughtTypedThrowIsFree() {
        enum Failure: Error { case rejected(Int) }
        func check(_ value: Int) throws(Failure) -> Int {
            if value % 3 == 0 { throw .rejected(value) }
            return value
        }
        var sum = 0
        var rejected = 0
        let count = countAllocations {
            for i in 0..<1_000 {
                do { sum &+= try check(i) } catch { rejected += 1 }
            }
        }
        #expect(rejected == 334)
        #expect(count == 0)
    }

    @Test("A throwing body stops the counter and rethrows")
    func throwingBody() {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            _ = try countAllocations { throw Boom() }
        }
        let count = countAllocations {}
        #expect(count == 0)
    }
}
