/*
 * Preloaded before libfaketime into every process whose wall clock the clock
 * nemesis moves: Debian's redis-server, and with --clock-target clients the
 * workers and their adapter programs. It mends two things.
 *
 * The allocator: redis-server is linked with jemalloc, and libfaketime calls dlsym() while
 * it initialises; dlsym allocates, jemalloc's first allocation reads the time,
 * the time is libfaketime's, which is not initialised yet: the two recurse and
 * the server never starts. Routing the allocator to glibc's own entry points
 * (which neither reads the time nor calls dlsym) breaks the cycle. Redis loses
 * jemalloc's fragmentation statistics, which a lock test does not need.
 *
 * The monotonic clock's waits (below): libfaketime 0.9.10 mistranslates them
 * even when told to leave that clock alone, which breaks sleeping in Python and
 * the JVM.
 *
 * Built by setup/shim.ts, when a run first needs it, into the user's cache
 * (~/.cache/fencecheck/faketime-shim-<hash of this file>.so), and by
 * backends/redis/docker/Dockerfile into the redis image.
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

/*
 * libfaketime 0.9.10 (Debian bookworm's) mistranslates an absolute sleep on a
 * monotonic clock even when told to leave that clock alone (DONT_FAKE_MONOTONIC,
 * which fencecheck always sets): it takes the faked start time off the deadline
 * and hands the kernel a negative time, EINVAL (libfaketime issue #426). Python
 * 3.11's time.sleep sleeps just so, so an adapter program in a worker whose clock
 * can be moved (--clock-target clients) could not sleep at all. With the
 * monotonic clock real there is nothing to translate: such a sleep goes to
 * glibc's own; every other sleep to libfaketime, next in line.
 */
#include <string.h>
#include <time.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
static clock_nanosleep_fn libc_clock_nanosleep, next_clock_nanosleep;

static int monotonic_is_real(void) {
  const char *v = getenv("FAKETIME_DONT_FAKE_MONOTONIC");
  if (v == NULL) v = getenv("DONT_FAKE_MONOTONIC");
  return v != NULL && strcmp(v, "1") == 0;
}

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *req, struct timespec *rem) {
  int monotonic = clock_id == CLOCK_MONOTONIC || clock_id == CLOCK_MONOTONIC_RAW || clock_id == CLOCK_BOOTTIME;
  if ((flags & TIMER_ABSTIME) && monotonic && monotonic_is_real()) {
    if (libc_clock_nanosleep == NULL) {
      void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
      if (libc != NULL) libc_clock_nanosleep = (clock_nanosleep_fn)dlsym(libc, "clock_nanosleep");
      if (libc_clock_nanosleep == NULL) abort();
    }
    return libc_clock_nanosleep(clock_id, flags, req, rem);
  }
  if (next_clock_nanosleep == NULL) {
    next_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (next_clock_nanosleep == NULL) abort();
  }
  return next_clock_nanosleep(clock_id, flags, req, rem);
}

/*
 * The same mistranslation in a timed wait on a condition variable that runs on
 * the monotonic clock (libfaketime fixed it after 0.9.10): the deadline is
 * compared with a faked monotonic time, so every such wait times out at once.
 * The JVM waits so (Object.wait, LockSupport.parkNanos), and Curator would spin.
 * glibc keeps the condvar's clock in bit 1 of __wrefs (since glibc 2.25); such a
 * wait goes to glibc's own when the monotonic clock is real.
 */
#include <pthread.h>

typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static cond_timedwait_fn libc_cond_timedwait, next_cond_timedwait;

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime) {
  if ((__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & 2) != 0 && monotonic_is_real()) {
    if (libc_cond_timedwait == NULL) {
      void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
      if (libc != NULL) libc_cond_timedwait = (cond_timedwait_fn)dlvsym(libc, "pthread_cond_timedwait", "GLIBC_2.3.2");
      if (libc_cond_timedwait == NULL) abort();
    }
    return libc_cond_timedwait(cond, mutex, abstime);
  }
  if (next_cond_timedwait == NULL) {
    next_cond_timedwait = (cond_timedwait_fn)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
    if (next_cond_timedwait == NULL) abort();
  }
  return next_cond_timedwait(cond, mutex, abstime);
}
