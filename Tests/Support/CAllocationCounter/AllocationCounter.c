// Per-thread heap allocation counter for tests.
//
// This file defines the C allocator entry points. Because the test executable defines them, the
// dynamic linker binds every caller in the process (libswiftCore, Foundation, libc itself) to
// these definitions instead of libc's. Each one forwards to glibc's real allocator through the
// exported `__libc_*` aliases, so memory is always owned by glibc's malloc (free,
// malloc_usable_size and reallocarray keep working on it), and counts the call when the calling
// thread has counting enabled.
//
// Safety during early process start: the state is two thread-local variables in the initial-exec
// (in practice local-exec) TLS model, which live in the static TLS block and are read without
// calling __tls_get_addr, so the hooks never allocate and work before and during libc and
// pthread initialisation. Nothing here calls dlsym, stdio or any other function that may
// allocate.
//
// glibc only: `__libc_malloc` and friends are glibc exports (GLIBC_2.2.5).

#include "CAllocationCounter.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

#define TMM_TLS __thread __attribute__((tls_model("initial-exec")))

static TMM_TLS unsigned long long tmm_count;
static TMM_TLS int tmm_enabled;

static inline void tmm_note(void) {
    if (__builtin_expect(tmm_enabled, 0)) {
        tmm_count += 1;
    }
}

static inline int tmm_is_power_of_two(size_t value) {
    return value != 0 && (value & (value - 1)) == 0;
}

void tmm_alloc_counter_start(void) {
    tmm_count = 0;
    tmm_enabled = 1;
}

unsigned long long tmm_alloc_counter_stop(void) {
    tmm_enabled = 0;
    return tmm_count;
}

#define TMM_EXPORT __attribute__((visibility("default"), used))

TMM_EXPORT void *malloc(size_t size) {
    tmm_note();
    return __libc_malloc(size);
}

TMM_EXPORT void *calloc(size_t count, size_t size) {
    tmm_note();
    return __libc_calloc(count, size);
}

TMM_EXPORT void *realloc(void *pointer, size_t size) {
    // realloc(p, 0) with p != NULL frees (glibc); anything else may allocate.
    if (pointer == NULL || size != 0) {
        tmm_note();
    }
    return __libc_realloc(pointer, size);
}

TMM_EXPORT void free(void *pointer) {
    __libc_free(pointer);
}

TMM_EXPORT int posix_memalign(void **result, size_t alignment, size_t size) {
    // POSIX: alignment must be a power of two multiple of sizeof(void *); *result is left alone
    // on failure and the error is returned, not stored in errno.
    if (!tmm_is_power_of_two(alignment) || alignment % sizeof(void *) != 0) {
        return EINVAL;
    }
    tmm_note();
    int saved = errno;
    void *memory = __libc_memalign(alignment, size);
    if (memory == NULL) {
        errno = saved;
        return ENOMEM;
    }
    *result = memory;
    return 0;
}

TMM_EXPORT void *aligned_alloc(size_t alignment, size_t size) {
    // C17 / glibc >= 2.38: the alignment must be a power of two.
    if (!tmm_is_power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    tmm_note();
    return __libc_memalign(alignment, size);
}

TMM_EXPORT void *memalign(size_t alignment, size_t size) {
    tmm_note();
    return __libc_memalign(alignment, size);
}

TMM_EXPORT void *valloc(size_t size) {
    tmm_note();
    return __libc_valloc(size);
}

TMM_EXPORT void *pvalloc(size_t size) {
    tmm_note();
    return __libc_pvalloc(size);
}
