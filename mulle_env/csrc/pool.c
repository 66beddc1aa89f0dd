/* The stepper's thread pool: the calling thread and n - 1 workers, each with its own RulesThread
 * (the capture search's memo and scratch space), so the rules run on all of them at once.
 *
 * A job is items 0..n-1 taken one at a time from a shared counter: which thread runs an item
 * changes nothing in what it computes (each item is one game, with its own random stream), so
 * the outputs are the same for every thread count. Workers wait on a condition variable
 * between jobs. Without POSIX threads (Windows) and in a process forked from the one that made
 * the pool (whose workers are not there) the caller runs every item itself.
 */
#include "native.h"

#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>
#define HAVE_THREADS 1
#else
#define HAVE_THREADS 0
#endif

typedef struct {
    struct Pool *pool;
    int index;
} Worker;

struct Pool {
    int n;             /* threads, the caller included */
    RulesThread **rt;  /* per thread */
    PoolJob job;
    void *ctx;
    int n_items;
    int next;          /* the next item (atomic) */
#if HAVE_THREADS
    pid_t pid;         /* the process that started the workers */
    pthread_t *tid;
    Worker *args;
    int started;       /* workers running */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long generation;
    int pending, quit;
#endif
};

static void work(Pool *p, int w) {
    CORE->thread_enter(p->rt[w]);
    for (;;) {
        int i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n_items) break;
        p->job(p->ctx, i);
    }
    CORE->thread_enter(NULL);
}

#if HAVE_THREADS
static void *worker_main(void *arg) {
    Worker *me = arg;
    Pool *p = me->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        work(p, me->index);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}
#endif

void pool_free(Pool *p) {
    if (!p) return;
#if HAVE_THREADS
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->quit = 1;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        if (p->pid == getpid())
            for (int w = 0; w < p->started; w++) pthread_join(p->tid[w], NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    PyMem_Free(p->tid);
    PyMem_Free(p->args);
#endif
    if (p->rt)
        for (int w = 0; w < p->n; w++) CORE->thread_free(p->rt[w]);
    PyMem_Free(p->rt);
    PyMem_Free(p);
}

Pool *pool_new(int n) {
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
#if HAVE_THREADS
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->pid = getpid();
#endif
    p->rt = native_failpoint() ? NULL : PyMem_Calloc(n, sizeof(RulesThread *));
    if (!p->rt) goto oom;
    for (int w = 0; w < n; w++) {
        p->rt[w] = native_failpoint() ? NULL : CORE->thread_new();
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
    p->job = job;
    p->ctx = ctx;
    p->n_items = n_items;
    p->next = 0;
#if HAVE_THREADS
    if (p->started && n_items > 1 && p->pid == getpid()) {
        pthread_mutex_lock(&p->mu);
        p->pending = p->started;
        p->generation++;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        work(p, 0);
        pthread_mutex_lock(&p->mu);
        while (p->pending) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
        return;
    }
#endif
    work(p, 0);
}

int pool_error(Pool *p) {
    int rc = 0;
    for (int w = 0; w < p->n; w++) {
        if (rc == 0) {
            rc = CORE->thread_error(p->rt[w]);
        } else { /* the first is raised; the others are dropped */
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            if (CORE->thread_error(p->rt[w]) < 0) PyErr_Clear();
            PyErr_Restore(t, v, tb);
        }
    }
    return rc;
}
