/* The stepper's thread pool: the calling thread and n - 1 workers, each with its own context of the
 * stepped game's core (its table's thread_new, game_ops.h: Mulle's is the capture search's memo and
 * scratch space), so the rules run on all of them at once.
 *
 * A job is items 0..n-1, claimed a few at a time: which thread runs an item changes nothing in
 * what it computes (each item is one game, with its own random stream), so the outputs are
 * the same for every thread count. The caller claims items too and never waits for a worker
 * that has not claimed one: on a machine whose cores are busy with other processes a worker
 * may wake late, and then the caller (and the workers that did wake) simply do its share.
 * Each thread has a home range of the items (thread w: the w-th of n equal parts) and claims
 * from it first, then from the others' ranges: a game stays on the same core from step to step
 * while every thread is on time, so its position stays in that core's cache (with one shared
 * counter the games changed cores every step; measured at K=256 on this project's 2 cores, 2
 * threads gave 1.52x one thread with home ranges against 1.45x without, medians of six runs,
 * within that machine's spread), and a late thread's range is still done by the others. Each
 * range's claims go through its own atomic word, generation << 32 | next item, a few items a
 * claim. A job is published like a seqlock: `generation` is odd while the caller writes the
 * job, its context, its size and the ranges, and a worker uses what it read only between two
 * equal even readings of it, so it never pairs one job's size with another job's ranges (a
 * worker that read the old generation and the new size could claim, in a range word not yet
 * rewritten, items of the new job that were then claimed again). A worker that wakes after its
 * job ended finds it exhausted (or takes part in the next one), and `inflight` counts the
 * claims being made or run, which the caller waits out before it returns.
 *
 * Between jobs a worker first spins for a short while (SPIN_NS) watching the job counter, then
 * sleeps on a condition variable. An env step is two or three jobs a few tens of microseconds
 * apart, with the caller's Python work between them: a worker woken through the condition
 * variable every time arrives after the caller has done most of the items itself, and the
 * wake-ups cost more than the second thread gives (measured: 0.82x one thread at K=64). The
 * caller signals the condition variable only when a worker is asleep (`sleepers`), so a step
 * between busy workers makes no system call. A spinning worker pauses the core (the CPU's
 * spin-wait hint) and yields it every few rounds, and sleeps after SPIN_NS, so an idle env
 * costs nothing and a machine with more threads than cores still makes progress.
 *
 * Without POSIX threads (Windows), and in a process forked from the one that started the
 * workers, the caller runs every item itself.
 *
 * Workers end before the interpreter does: every pool with workers is on a list, and
 * pool_stop_all (the module registers it with Python's atexit) joins them all, whether or not
 * the Python objects that own the pools are ever freed, so no thread of ours runs while the
 * interpreter and the C runtime tear down (a CI test run once died of a segfault at exit, cause
 * not found; LeakSanitizer's tracer crashes at exit turned out to be its own runtime's bug, see
 * .ci/sanitize). A stopped pool still works, its caller running every item itself. A forked child's copy of a pool has
 * no workers, and its mutex and condition variable still count the parent's sleeping workers,
 * so the child never touches them: glibc's destroy of such a condition variable waits forever.
 */
#include "native.h"

#ifndef _WIN32
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#define HAVE_THREADS 1
/* How long a worker watches for the next job before it sleeps: longer than the caller's Python work
 * between the jobs of one env step, short enough that an env left idle frees its cores at once. */
#define SPIN_NS 200000L
#else
#define HAVE_THREADS 0
#endif

typedef struct {
    struct Pool *pool;
    int index;
} Worker;

struct Pool {
    int n;             /* threads, the caller included */
    const GameOps *ops; /* the game whose thread contexts these are */
    void **rt;         /* per thread: its context */
    PoolJob job;       /* the current job: written before `generation` publishes it */
    void *ctx;
    int n_items;
    uint64_t generation; /* atomic: even, the current job's (ranges tagged with its low 32 bits); odd while the
                          * caller writes the next one */
    uint64_t *range;   /* per thread w, at range[w * LINE]: atomic generation << 32 | the next item of its range */
    int inflight;      /* atomic: claims being made or run */
    int alone;         /* the job pool_start published runs on pool_finish's thread alone */
#if HAVE_THREADS
    pid_t pid;         /* the process that started the workers */
    pthread_t *tid;
    Worker *args;
    int started;       /* workers running */
    pthread_mutex_t mu;
    pthread_cond_t go;
    unsigned long wake; /* atomic: bumped for every job */
    int sleepers;       /* atomic: workers waiting on `go` (or about to) */
    int quit;           /* atomic */
    struct Pool *prev, *next; /* on `live` while it has workers */
    int linked;
#endif
};

#if HAVE_THREADS
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static Pool *live = NULL; /* the pools with workers, for pool_stop_all */
#endif

#define LINE 8 /* uint64s in a cache line: each range's word on its own line */

/* The end (exclusive) of thread r's range of n items among t threads; it starts where r - 1's ends. */
static inline uint32_t range_end(uint32_t n, int r, int t) { return (uint32_t)(((uint64_t)n * (r + 1)) / t); }

/* Claim and run items of the published job, home range first, until none is left; a job ended meanwhile is
 * left alone. */
static void work(Pool *p, int w) {
    p->ops->thread_enter(p->rt[w]);
    for (;;) {
        __atomic_add_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
        uint64_t gen = __atomic_load_n(&p->generation, __ATOMIC_SEQ_CST);
        PoolJob job = __atomic_load_n(&p->job, __ATOMIC_SEQ_CST);
        void *ctx = __atomic_load_n(&p->ctx, __ATOMIC_SEQ_CST);
        uint32_t n = (uint32_t)__atomic_load_n(&p->n_items, __ATOMIC_SEQ_CST);
        if ((gen & 1) || __atomic_load_n(&p->generation, __ATOMIC_SEQ_CST) != gen) {
            /* A job being published (or published meanwhile): what was read may mix two jobs. The caller
             * bumps `wake` once it is out, and the worker comes back for it. */
            __atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
            break;
        }
        uint64_t tag = gen & 0xFFFFFFFFu;
        int claimed = 0;
        uint32_t end = 0, first = 0;
        /* Job, ctx and n are gen's (read between two equal even readings), and a claim in a word tagged gen
         * takes only gen's items: the caller rewrites the words for the next job only after every item of gen
         * was claimed, and (gen, i) never comes back. */
        for (int k = 0; k < p->n && !claimed; k++) {
            int r = (w + k) % p->n;
            uint64_t *word = &p->range[(size_t)r * LINE];
            uint32_t stop = range_end(n, r, p->n);
            uint64_t st = __atomic_load_n(word, __ATOMIC_SEQ_CST);
            while ((st >> 32) == tag && (uint32_t)st < stop) {
                /* Guided claims: a share of what is left of the range, at most 8 items, so a range's last
                 * claims are single items and the threads end the job together (with claims of a fixed
                 * size the last one kept one thread busy alone for up to 8 items' time). */
                uint32_t chunk = (stop - (uint32_t)st) / (uint32_t)(2 * p->n);
                if (chunk > 8) chunk = 8;
                if (chunk < 1) chunk = 1;
                end = (uint32_t)st + chunk;
                if (__atomic_compare_exchange_n(word, &st, (st & ~(uint64_t)0xFFFFFFFFu) | end, 0, __ATOMIC_SEQ_CST,
                                                __ATOMIC_SEQ_CST)) {
                    claimed = 1;
                    first = (uint32_t)st;
                    break;
                }
            }
        }
        if (claimed)
            for (uint32_t i = first; i < end; i++) job(ctx, (int)i);
        __atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
        if (!claimed) break; /* every range of gen exhausted (or gen ended): nothing left to claim */
    }
    p->ops->thread_enter(NULL);
}

#if HAVE_THREADS
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Wait for a job counter other than `seen` (or quit): spin for SPIN_NS, then sleep on `go`. */
static unsigned long wait_for_job(Pool *p, unsigned long seen) {
    long start = now_ns();
    for (int round = 1;; round++) {
        unsigned long w = __atomic_load_n(&p->wake, __ATOMIC_SEQ_CST);
        if (w != seen || __atomic_load_n(&p->quit, __ATOMIC_SEQ_CST)) return w;
        cpu_relax();
        if ((round & 255) == 0) {
            if (now_ns() - start > SPIN_NS) break;
            sched_yield(); /* a core shared with other work: let it run */
        }
    }
    pthread_mutex_lock(&p->mu);
    /* sleepers is raised before wake is read again; pool_start bumps wake before it reads sleepers: one of
     * the two sees the other's write (both sequentially consistent), so no job is slept through. */
    __atomic_add_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
    unsigned long w;
    while ((w = __atomic_load_n(&p->wake, __ATOMIC_SEQ_CST)) == seen && !__atomic_load_n(&p->quit, __ATOMIC_SEQ_CST))
        pthread_cond_wait(&p->go, &p->mu);
    __atomic_sub_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&p->mu);
    return w;
}

static void *worker_main(void *arg) {
    Worker *me = arg;
    Pool *p = me->pool;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_for_job(p, seen);
        if (__atomic_load_n(&p->quit, __ATOMIC_SEQ_CST)) break;
        work(p, me->index);
    }
    return NULL;
}
#endif

#if HAVE_THREADS
/* Join p's workers (with the GIL or at exit; never from a worker). Afterwards the caller runs every item. */
static void pool_stop(Pool *p) {
    if (!__atomic_load_n(&p->started, __ATOMIC_SEQ_CST) || p->pid != getpid()) return;
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->quit, 1, __ATOMIC_SEQ_CST);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int w = 0; w < p->started; w++) pthread_join(p->tid[w], NULL);
    __atomic_store_n(&p->started, 0, __ATOMIC_SEQ_CST);
}

static void unlink_pool(Pool *p) {
    pthread_mutex_lock(&live_mu);
    if (p->linked) {
        if (p->prev) p->prev->next = p->next;
        else live = p->next;
        if (p->next) p->next->prev = p->prev;
        p->linked = 0;
    }
    pthread_mutex_unlock(&live_mu);
}
#endif

void pool_stop_all(void) {
#if HAVE_THREADS
    pthread_mutex_lock(&live_mu);
    for (Pool *p = live; p; p = p->next) pool_stop(p);
    pthread_mutex_unlock(&live_mu);
#endif
}

void pool_free(Pool *p) {
    if (!p) return;
#if HAVE_THREADS
    unlink_pool(p);
    pool_stop(p);
    if (p->pid == getpid()) { /* a forked child's copies may count the parent's waiters: left alone */
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->go);
    }
    PyMem_Free(p->tid);
    PyMem_Free(p->args);
#endif
    if (p->rt)
        for (int w = 0; w < p->n; w++) p->ops->thread_free(p->rt[w]);
    PyMem_Free(p->rt);
    PyMem_Free(p->range);
    PyMem_Free(p);
}

Pool *pool_new(const GameOps *ops, int n) {
    if (n < 1) n = 1;
#if !HAVE_THREADS
    n = 1;
#endif
    Pool *p = native_failpoint() ? NULL : PyMem_Calloc(1, sizeof(Pool));
    if (!p) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    p->n = n;
    p->ops = ops;
#if HAVE_THREADS
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    p->pid = getpid();
#endif
    p->rt = native_failpoint() ? NULL : PyMem_Calloc(n, sizeof(void *));
    p->range = native_failpoint() ? NULL : PyMem_Calloc((size_t)n * LINE, sizeof(uint64_t));
    if (!p->rt || !p->range) goto oom;
    for (int w = 0; w < n; w++) {
        p->rt[w] = native_failpoint() ? NULL : ops->thread_new();
        if (!p->rt[w]) goto oom;
    }
#if HAVE_THREADS
    if (n > 1) {
        p->tid = native_failpoint() ? NULL : PyMem_Calloc(n - 1, sizeof(pthread_t));
        p->args = native_failpoint() ? NULL : PyMem_Calloc(n - 1, sizeof(Worker));
        if (!p->tid || !p->args) goto oom;
        for (int w = 0; w < n - 1; w++) {
            p->args[w].pool = p;
            p->args[w].index = w + 1;
            if (pthread_create(&p->tid[w], NULL, worker_main, &p->args[w]) != 0) {
                PyErr_Format(PyExc_RuntimeError, "cannot start the stepper's worker thread %d of %d", w + 1, n - 1);
                pool_free(p);
                return NULL;
            }
            p->started++;
        }
        pthread_mutex_lock(&live_mu);
        p->next = live;
        if (live) live->prev = p;
        live = p;
        p->linked = 1;
        pthread_mutex_unlock(&live_mu);
    }
#endif
    return p;
oom:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    pool_free(p);
    return NULL;
}

int pool_threads(const Pool *p) { return p->n; }

void pool_run(Pool *p, PoolJob job, void *ctx, int n_items) {
    pool_start(p, job, ctx, n_items);
    pool_finish(p);
}

void pool_start(Pool *p, PoolJob job, void *ctx, int n_items) {
#if HAVE_THREADS
    p->alone = !__atomic_load_n(&p->started, __ATOMIC_SEQ_CST) || n_items <= 1 || p->pid != getpid();
#else
    p->alone = 1;
#endif
    if (p->alone) { /* no claims to share: pool_finish runs the items in order, on its thread's scratch space */
        /* Stored as a worker reads them (a late worker of an earlier job may still look; it finds the
         * generation unchanged and every range exhausted). */
        __atomic_store_n(&p->job, job, __ATOMIC_SEQ_CST);
        __atomic_store_n(&p->ctx, ctx, __ATOMIC_SEQ_CST);
        __atomic_store_n(&p->n_items, n_items, __ATOMIC_SEQ_CST);
        return;
    }
    uint64_t generation = __atomic_load_n(&p->generation, __ATOMIC_SEQ_CST) + 1;
    __atomic_store_n(&p->generation, generation, __ATOMIC_SEQ_CST); /* odd: a job is being written */
    __atomic_store_n(&p->job, job, __ATOMIC_SEQ_CST);
    __atomic_store_n(&p->ctx, ctx, __ATOMIC_SEQ_CST);
    __atomic_store_n(&p->n_items, n_items, __ATOMIC_SEQ_CST);
    generation++;
    uint64_t tag = generation & 0xFFFFFFFFu;
    for (int r = 0; r < p->n; r++) /* each range's first item, tagged with the new generation */
        __atomic_store_n(&p->range[(size_t)r * LINE], tag << 32 | (r ? range_end(n_items, r - 1, p->n) : 0),
                         __ATOMIC_SEQ_CST);
    __atomic_store_n(&p->generation, generation, __ATOMIC_SEQ_CST); /* even: publishes the job */
#if HAVE_THREADS
    __atomic_add_fetch(&p->wake, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0) { /* else every worker is spinning: it sees wake */
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
#endif
}

int pool_inherited(const Pool *p) {
#if HAVE_THREADS
    return !p->alone && p->pid != getpid();
#else
    return 0;
#endif
}

void pool_finish(Pool *p) {
    if (p->alone) {
        p->ops->thread_enter(p->rt[0]);
        for (int i = 0; i < p->n_items; i++) p->job(p->ctx, i);
        p->ops->thread_enter(NULL);
        return;
    }
    work(p, 0);
    /* Every item is claimed; the claims still being run (or tried) must end before ctx goes away. */
    while (__atomic_load_n(&p->inflight, __ATOMIC_SEQ_CST) > 0) {
#if HAVE_THREADS
        sched_yield();
#endif
    }
}

int pool_error(Pool *p) {
    int rc = 0;
    for (int w = 0; w < p->n; w++) {
        if (rc == 0) {
            rc = p->ops->thread_error(p->rt[w]);
        } else { /* the first is raised; the others are dropped */
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            if (p->ops->thread_error(p->rt[w]) < 0) PyErr_Clear();
            PyErr_Restore(t, v, tb);
        }
    }
    return rc;
}
