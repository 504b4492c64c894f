// Per-thread heap allocation counter for tests (see AllocationCounter.c).
//
// Linking this target into a test executable interposes the C allocator (malloc, calloc,
// realloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, free) for the whole process.
// Every call is forwarded to glibc's own allocator; while counting is enabled on a thread, each
// allocation made *by that thread* increments that thread's counter. Other threads are unaffected.
#ifndef TMM_ALLOCATION_COUNTER_H
#define TMM_ALLOCATION_COUNTER_H

#ifdef __cplusplus
extern "C" {
#endif

/// Resets the calling thread's counter to zero and starts counting on this thread.
void tmm_alloc_counter_start(void);

/// Stops counting on the calling thread and returns the number of allocations it made since
/// `tmm_alloc_counter_start()`.
unsigned long long tmm_alloc_counter_stop(void);

#ifdef __cplusplus
}
#endif

#endif
