/*
 * Preloaded before libfaketime into Debian's redis-server.
 *
 * Why: redis-server is linked with jemalloc, and libfaketime calls dlsym() while
 * it initialises; dlsym allocates, jemalloc's first allocation reads the time,
 * the time is libfaketime's, which is not initialised yet: the two recurse and
 * the server never starts. Routing the allocator to glibc's own entry points
 * (which neither reads the time nor calls dlsym) breaks the cycle. Redis loses
 * jemalloc's fragmentation statistics, which a lock test does not need.
 *
 * Built by setup/shim.ts, when a run first needs it, into the user's cache
 * (~/.cache/fencecheck/faketime-shim-<hash of this file>.so), and by
 * docker/redis/Dockerfile into the redis image.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <dlfcn.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t size);

void *malloc(size_t size) { return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { return __libc_memalign(alignment, size); }

void *aligned_alloc(size_t alignment, size_t size) { return __libc_memalign(alignment, size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
  /* POSIX wants a power of two that is a multiple of sizeof(void *). */
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *p = __libc_memalign(alignment, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

/*
 * glibc exports no __libc_ name for this one, and jemalloc's (next in line for
 * redis-server) would read glibc's chunks as its own. Ask libc itself: dlsym may
 * allocate, which is safe now that malloc above never calls back into dlsym.
 */
typedef size_t (*usable_size_fn)(void *);
static usable_size_fn libc_usable_size;

size_t malloc_usable_size(void *p) {
  if (libc_usable_size == NULL) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc != NULL) libc_usable_size = (usable_size_fn)dlsym(libc, "malloc_usable_size");
    if (libc_usable_size == NULL) abort();
  }
  return libc_usable_size(p);
}
