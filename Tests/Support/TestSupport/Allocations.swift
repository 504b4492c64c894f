// Heap-allocation counting for zero-allocation tests, backed by the CAllocationCounter malloc
// interposer (linked into the test executable through this target).
import CAllocationCounter

/// Runs `body` on the calling thread and returns how many heap allocations (malloc, calloc,
/// realloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc) the calling thread made
/// while it ran. Allocations by other threads are not counted.
///
/// `body` must be synchronous and should not call test expectations (`#expect` allocates): check
/// the result afterwards. Run the code once before measuring if it may trigger one-time work such
/// as lazy globals or generic metadata instantiation. Calls do not nest: an inner call resets and
/// stops the counter of the outer one.
///
/// Swift Testing captures a backtrace, on the throwing thread and with heap allocations, for every
/// Swift error thrown (typed throws included) unless `SWT_SWIFT_ERROR_BACKTRACING_ENABLED=0` is in
/// the environment; `make test` sets it for the allocation run. Without it, a body that throws and
/// catches counts those allocations too.
public func countAllocations(_ body: () throws -> Void) rethrows -> UInt64 {
    tmm_alloc_counter_start()
    do {
        try body()
    } catch {
        _ = tmm_alloc_counter_stop()
        throw error
    }
    return UInt64(tmm_alloc_counter_stop())
}
