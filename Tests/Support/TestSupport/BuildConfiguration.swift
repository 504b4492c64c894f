/// Whether this test binary was built with optimizations.
///
/// Heap-allocation counts are only meaningful in optimized builds: a debug build boxes closure
/// contexts and iterators that the optimizer removes. `make test` runs the allocation suites a
/// second time with `swift test -c release`, where this is true.
#if DEBUG
    public let isOptimizedBuild = false
#else
    public let isOptimizedBuild = true
#endif

/// The reason allocation suites give when they are skipped in a debug build.
public let allocationTestsNeedOptimizedBuild =
    "heap-allocation counts are meaningful only in optimized builds; `make test` runs this suite with -c release"
