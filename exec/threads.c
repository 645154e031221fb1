/* threads.c -- one intra-op pool: OpenMP, which the OpenMP build of OpenBLAS
 * shares, so BLAS calls and the engine's kernels never run two pools; the
 * binding of a run's threads to CPUs (exec.h: exec_bind); and their
 * handling of denormal floats (exec_denormals_set). */
#define _GNU_SOURCE /* pthread_setaffinity_np, sched_getaffinity */
#include "internal.h"
#include "ops/conv.h"

#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

static int g_intra;

void exec_threads_set(int intra)
{
    if (intra <= 0)
        intra = exec_cpus();
    g_intra = intra;
    omp_set_num_threads(intra);
    openblas_set_num_threads(intra);
}

int exec_threads_get(void) { return g_intra > 0 ? g_intra : exec_cpus(); }

const char *exec_blas_config(void)
{
    static char buf[256];
    if (!buf[0]) {
        const char *c = openblas_get_config();
        snprintf(buf, sizeof buf, "%s", c ? c : "unknown");
        /* openblas_get_config() may end with a space */
        size_t n = strlen(buf);
        while (n && buf[n - 1] == ' ')
            buf[--n] = 0;
    }
    return buf;
}

const char *exec_cpu_model(void)
{
    static char buf[256];
    if (!buf[0]) {
        snprintf(buf, sizeof buf, "unknown");
        FILE *f = fopen("/proc/cpuinfo", "r");
        if (f) {
            char line[512];
            while (fgets(line, sizeof line, f)) {
                if (strncmp(line, "model name", 10) == 0) {
                    const char *v = strchr(line, ':');
                    if (v) {
                        v++;
                        while (*v == ' ')
                            v++;
                        snprintf(buf, sizeof buf, "%s", v);
                        buf[strcspn(buf, "\n")] = 0;
                    }
                    break;
                }
            }
            fclose(f);
        }
    }
    return buf;
}

/* ---- the work below which a kernel keeps to one thread ------------------------
 * A parallel region costs its team's wake-up and barrier (about a
 * microsecond on two cores, several where the cores are many or far apart);
 * a loop is worth splitting when what the split saves, (1 - 1/n) of its
 * serial time, is at least twice that. Both are measured once per process,
 * on this machine: the least of a few empty regions of the team, and the
 * serial time per element of a streaming loop (y = a + b) and of a
 * transcendental one (tanh) over 16384 floats, in cache as a recurrent
 * cell's gates are. The loops are the kernels' own copy for the vector set
 * in use (ops/calibrate.c, exec_calib_now), timed again for each set a run
 * switches to: a loop timed in other instructions than the kernels' gives
 * another threshold than theirs. The streaming loop is timed again at the
 * size its first time gives as the threshold (arrays of ~200 thousand
 * floats here, past the core's own cache, 0.11 ns an element against
 * 0.056): the threshold is then one for the tensors it decides about (~100
 * thousand elements here where it was ~200 thousand; measured by
 * alternating runs, residual small inference 7.0 -> 6.4 ms a step, memnet
 * training 1.22 -> 1.12, the other workloads within their noise). The
 * least of several runs is the one other processes disturbed least. */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static double g_fork_ns;
static int g_fork_team;
static pthread_mutex_t g_par_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_par_ready[EXEC_SIMD_AVX512 + 1]; /* by exec_simd level */
static int64_t g_par_min[EXEC_SIMD_AVX512 + 1][EXEC_WORK_COUNT];

static void par_region(int n)
{
#pragma omp parallel num_threads(n)
    __asm__ volatile("" ::: "memory");
}

/* the elements past which splitting a loop of `per` ns an element over a
 * team of `team` saves twice a region's cost `fork` */
static double split_at(double fork, double per, int team) { return 2.0 * fork / (per * (1.0 - 1.0 / team)); }

static void fork_measure(void)
{
    int team = exec_threads_get() > 1 ? exec_threads_get() : 2;
    double fork = 1e30;
    par_region(team); /* the first region starts the team's threads */
    /* up to 31 regions, at most 20 ms of them once 5 are timed (a loaded
     * machine can make each wait for a core) */
    double start = (double)base_now_ns();
    for (int r = 0; r < 31 && (r < 5 || (double)base_now_ns() - start < 2e7); r++) {
        double t0 = (double)base_now_ns();
        par_region(team);
        double d = (double)base_now_ns() - t0;
        fork = d < fork ? d : fork;
    }
    /* a region that waited for a core (another process's) is not the cost
     * of a region: past 20 us (a wake-up across many cores takes a few) the
     * machine was loaded while it was timed */
    g_fork_ns = fork > 20000.0 ? 20000.0 : fork;
    g_fork_team = team;
}

/* the thresholds of vector set s, the loops timed in its instructions */
static void par_measure(exec_simd s)
{
    enum { N = 16384, REPS = 15 };
    pthread_once(&g_fork_once, fork_measure);
    const double fork = g_fork_ns;
    const int team = g_fork_team;
    double per[EXEC_WORK_COUNT];
    for (int w = 0; w < EXEC_WORK_COUNT; w++)
        per[w] = exec_calib_now((exec_work)w)(N, REPS);
    if (per[EXEC_WORK_STREAM] > 0) {
        /* at that size the arrays are past the cache it timed: time the
         * loop again at the size it decides about (at most 3 MB of arrays,
         * past any core's own cache: a millisecond, once) */
        double n1 = split_at(fork, per[EXEC_WORK_STREAM], team);
        double at = exec_calib_now(EXEC_WORK_STREAM)(n1 < N ? N : n1 > 262144.0 ? 262144 : (int64_t)n1, 5);
        per[EXEC_WORK_STREAM] = at > per[EXEC_WORK_STREAM] ? at : per[EXEC_WORK_STREAM];
    }
    for (int w = 0; w < EXEC_WORK_COUNT; w++) {
        double n = per[w] > 0 ? split_at(fork, per[w], team) : 32768.0;
        /* bounds: a region for a few thousand elements never pays; past
         * four million a second thread always does */
        g_par_min[s][w] = n < 2048.0 ? 2048 : n > 4194304.0 ? 4194304 : (int64_t)n;
    }
}

int64_t exec_par_min(exec_work w)
{
    exec_simd s = conv_simd(); /* the set whose kernels ask */
    if (__builtin_expect(!atomic_load_explicit(&g_par_ready[s], memory_order_acquire), 0)) {
        pthread_mutex_lock(&g_par_lock);
        if (!atomic_load_explicit(&g_par_ready[s], memory_order_relaxed)) {
            par_measure(s);
            atomic_store_explicit(&g_par_ready[s], 1, memory_order_release);
        }
        pthread_mutex_unlock(&g_par_lock);
    }
    return g_par_min[s][(unsigned)w < EXEC_WORK_COUNT ? w : EXEC_WORK_STREAM];
}

double exec_fork_ns(void)
{
    pthread_once(&g_fork_once, fork_measure);
    return g_fork_ns;
}

/* ---- thread binding -------------------------------------------------------- */
static struct {
    pthread_once_t once;
    cpu_set_t initial; /* the process's CPUs at the first question (binding, cores) */
    int n;             /* places: the CPUs of `initial`, by socket, core, CPU */
    int cpu[CPU_SETSIZE];
    int physical, sockets; /* the places' cores and sockets (sysfs; n and 1 where it does not say) */
    const char *why_not;   /* NULL: binding takes effect here */
} B = { .once = PTHREAD_ONCE_INIT };
static _Atomic int g_bind;  /* the process default (an exec_bind) */
static _Atomic int g_bound; /* some thread was bound: NONE must unbind */
/* How this thread's team was bound last (b 0: never by fathom). */
static _Thread_local struct {
    int b, base, n, total;
} tl_bind;

static int sys_int(int cpu, const char *what)
{
    char path[128];
    int v = -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void places_init(void)
{
    static int pkg[CPU_SETSIZE], core[CPU_SETSIZE];
    const char *env[] = { "OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY" };
    for (size_t i = 0; i < sizeof env / sizeof env[0] && !B.why_not; i++) {
        const char *v = getenv(env[i]);
        if (v && *v && !(i == 0 && strcasecmp(v, "false") == 0))
            B.why_not = i == 0   ? "OMP_PROC_BIND is set: the OpenMP runtime binds the threads"
                        : i == 1 ? "OMP_PLACES is set: the OpenMP runtime binds the threads"
                                 : "GOMP_CPU_AFFINITY is set: the OpenMP runtime binds the threads";
    }
    if (!B.why_not && openblas_get_parallel() != 2)
        B.why_not = "OpenBLAS is not its OpenMP build: its own threads cannot be bound per run";
    if (sched_getaffinity(0, sizeof B.initial, &B.initial) != 0) {
        if (!B.why_not)
            B.why_not = "the process's CPUs cannot be read (sched_getaffinity)";
        return;
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &B.initial)) {
            int i = B.n++;
            pkg[c] = sys_int(c, "physical_package_id"), core[c] = sys_int(c, "core_id");
            /* insertion by (socket, core, CPU): SMT siblings side by side */
            while (i > 0) {
                int d = B.cpu[i - 1];
                if (pkg[d] < pkg[c] || (pkg[d] == pkg[c] && core[d] <= core[c]))
                    break;
                B.cpu[i] = d, i--;
            }
            B.cpu[i] = c;
        }
    /* sorted by (socket, core): a new core or socket wherever the pair changes */
    int known = 1;
    for (int i = 0; i < B.n; i++) {
        int c = B.cpu[i], d = i ? B.cpu[i - 1] : -1;
        known &= pkg[c] >= 0 && core[c] >= 0;
        B.physical += !i || pkg[c] != pkg[d] || core[c] != core[d];
        B.sockets += !i || pkg[c] != pkg[d];
    }
    if (!known)
        B.physical = B.n, B.sockets = 1;
    if (B.n < 2 && !B.why_not)
        B.why_not = "one CPU to run on: nothing to bind";
}

static int g_cpus;
static double g_quota;

static void cpus_init(void)
{
    int n = exec_cores();
    g_quota = exec_cgroup_cpu_limit("");
    if (g_quota > 0 && ceil(g_quota) < n)
        n = (int)ceil(g_quota); /* at least 1: the quota is above 0 */
    g_cpus = n;
}

/* The CPUs this process may run on (its affinity at the first question:
 * `taskset -c 0-3` or a container's cpuset gives 4 on a 16-CPU machine,
 * as OpenMP counts them), else the CPUs online. */
int exec_cores(void)
{
    pthread_once(&B.once, places_init);
    if (B.n > 0)
        return B.n;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static pthread_once_t g_cpus_once = PTHREAD_ONCE_INIT;

int exec_cpus(void)
{
    pthread_once(&g_cpus_once, cpus_init);
    return g_cpus;
}

double exec_cpu_quota(void)
{
    pthread_once(&g_cpus_once, cpus_init);
    return g_quota;
}

void exec_cpu_topology(int *physical, int *sockets)
{
    pthread_once(&B.once, places_init);
    *physical = B.n > 0 ? B.physical : exec_cores();
    *sockets = B.n > 0 ? B.sockets : 1;
}

void exec_bind_set(exec_bind b) { atomic_store_explicit(&g_bind, (int)b, memory_order_relaxed); }

exec_bind exec_bind_get(void)
{
    int b = atomic_load_explicit(&g_bind, memory_order_relaxed);
    return b == EXEC_BIND_DEFAULT ? EXEC_BIND_NONE : (exec_bind)b;
}

static const char *const bind_names[] = { "default", "none", "close", "spread" };

const char *exec_bind_name(exec_bind b)
{
    return (unsigned)b < sizeof bind_names / sizeof bind_names[0] ? bind_names[b] : "?";
}

int exec_bind_from_name(const char *name)
{
    for (int b = EXEC_BIND_NONE; b <= EXEC_BIND_SPREAD; b++)
        if (name && strcmp(name, bind_names[b]) == 0)
            return b;
    return -1;
}

const char *exec_bind_unavailable(exec_bind b)
{
    if (b == EXEC_BIND_DEFAULT || b == EXEC_BIND_NONE)
        return NULL;
    pthread_once(&B.once, places_init);
    return B.why_not;
}

exec_status exec_bind_parse(const char *name, exec_bind *b)
{
    int x = name ? exec_bind_from_name(name) : -1;
    if (x < 0)
        return exec_fail(EXEC_ERR_ARG, "unknown thread binding '%s' (use none, close or spread)", name ? name : "");
    const char *why = exec_bind_unavailable((exec_bind)x);
    if (why)
        return exec_fail(EXEC_ERR_ARG, "--bind %s cannot take effect here: %s", name, why);
    *b = (exec_bind)x;
    return EXEC_OK;
}

int exec_bind_places(int *cpus, int max)
{
    pthread_once(&B.once, places_init);
    int n = B.n < max ? B.n : max;
    for (int i = 0; i < n; i++)
        cpus[i] = B.cpu[i];
    return n;
}

int exec_bind_cpu(exec_bind b, int slot, int n)
{
    pthread_once(&B.once, places_init);
    if (B.n < 1 || n < 1 || (b != EXEC_BIND_CLOSE && b != EXEC_BIND_SPREAD))
        return -1;
    slot %= n;
    return b == EXEC_BIND_CLOSE ? B.cpu[slot % B.n] : B.cpu[(int)((int64_t)slot * B.n / n)];
}

/* The calling thread to its place (NONE: every place); a refusal (a CPU
 * taken away since) leaves it where it was. */
static void bind_self(exec_bind b, int slot, int total)
{
    int cpu = exec_bind_cpu(b, slot, total);
    cpu_set_t set = B.initial;
    if (cpu >= 0) {
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
    }
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void exec_bind_team(exec_bind b, int base, int n, int total)
{
    if (b == EXEC_BIND_DEFAULT)
        b = exec_bind_get();
    if (b == EXEC_BIND_NONE && !atomic_load_explicit(&g_bound, memory_order_relaxed))
        return; /* nothing was ever bound: every thread has every place */
    if (tl_bind.b == (int)b && tl_bind.base == base && tl_bind.n == n && tl_bind.total == total)
        return;
    if (exec_bind_unavailable(b))
        return;
    if (b != EXEC_BIND_NONE)
        atomic_store_explicit(&g_bound, 1, memory_order_relaxed);
    if (n <= 1) {
        bind_self(b, base, total);
    } else {
#pragma omp parallel num_threads(n)
        bind_self(b, base + omp_get_thread_num(), total);
    }
    tl_bind.b = (int)b, tl_bind.base = base, tl_bind.n = n, tl_bind.total = total;
}

/* ---- denormal floats ------------------------------------------------------ */
static _Atomic int g_flush = 1;
static _Thread_local struct {
    int flush, n; /* the mode this thread's team of n was set to (-1: never) */
} tl_denorm = { -1, 0 };
static const char *const denorm_names[] = { "keep", "flush" };

void exec_denormals_set(int flush) { atomic_store(&g_flush, flush != 0); }
int exec_denormals_get(void) { return atomic_load(&g_flush); }
const char *exec_denormals_name(int flush) { return denorm_names[flush != 0]; }

int exec_denormals_from_name(const char *name)
{
    for (int i = 0; i < 2; i++)
        if (name && strcmp(name, denorm_names[i]) == 0)
            return i;
    return -1;
}

/* the calling thread's mode: x86's MXCSR FTZ (bit 15) and DAZ (bit 6),
 * AArch64's FPCR.FZ (bit 24); written only where it differs */
static void denormals_self(int flush)
{
#if defined(__x86_64__) || defined(__i386__)
    const unsigned bits = 0x8040u, cur = _mm_getcsr(), want = flush ? cur | bits : cur & ~bits;
    if (want != cur)
        _mm_setcsr(want);
#elif defined(__aarch64__)
    uint64_t cur, want;
    __asm__ volatile("mrs %0, fpcr" : "=r"(cur));
    want = flush ? cur | (UINT64_C(1) << 24) : cur & ~(UINT64_C(1) << 24);
    if (want != cur)
        __asm__ volatile("msr fpcr, %0" : : "r"(want));
#else
    (void)flush;
#endif
}

void exec_denormals_team(int n)
{
    const int flush = atomic_load_explicit(&g_flush, memory_order_relaxed);
    denormals_self(flush); /* first: team threads started from now on inherit it */
    /* a smaller team is some of the same threads; the OpenMP runtime's
     * threads past it end when a team shrinks, and new ones copy this
     * thread's mode */
    if (tl_denorm.flush == flush && n <= tl_denorm.n)
        return;
    if (n > 1) {
#pragma omp parallel num_threads(n)
        denormals_self(flush);
    }
    tl_denorm.flush = flush, tl_denorm.n = n;
}
