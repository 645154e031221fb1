/* bench_omp_idle.c -- what an idle OpenMP team beside a running one costs.
 *
 * libgomp spins between a team's parallel regions only while the threads it
 * manages, all teams together, are no more than the CPUs; above that, a
 * waiting thread sleeps after 1000 spins and every region pays the wake-ups.
 * This is why the engine runs an inter-op run's worker 0 on the calling
 * thread and why the tuner releases the pool of inter-op workers before a
 * point without them (exec_workers_release): an idle team of the caller, or
 * of other settings' workers, slowed every region of the measured point.
 *
 * Prints the time per region of a team of T threads (a short loop in each,
 * a short serial part between) with 0, 1 and 4 idle teams of T threads kept
 * by other threads, and each over the first.
 *   bench_omp_idle [--threads T (default: the CPUs)] [--regions N (20000)]
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile double g_sink;

/* n regions of a team of t threads (about a microsecond of work each), a
 * serial part between */
static void regions(int n, int t)
{
    for (int i = 0; i < n; i++) {
#pragma omp parallel num_threads(t)
        {
            double s = 0;
            for (int k = 0; k < 2000; k++)
                s += k * 0.5;
            g_sink = s;
        }
        double s = 0;
        for (int k = 0; k < 3000; k++)
            s += k;
        g_sink = s;
    }
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_quit, g_team;

/* makes its own team of g_team threads, then waits (the team idle) */
static void *idle_team(void *arg)
{
    (void)arg;
    regions(10, g_team);
    pthread_mutex_lock(&g_mu);
    while (!g_quit)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

int main(int argc, char **argv)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int t = ncpu > 1 ? (int)ncpu : 2, n = 20000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 2)
            t = atoi(argv[++i]);
        else if (strcmp(argv[i], "--regions") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1)
            n = atoi(argv[++i]);
        else {
            fprintf(stderr, "bench_omp_idle: unknown or bad argument '%s' (--threads T>=2, --regions N>=1)\n", argv[i]);
            return 2;
        }
    }
    g_team = t;
    printf("%ld CPUs; a team of %d threads, %d regions a measurement\n", ncpu, t, n);
    printf("%-12s %12s %8s\n", "idle teams", "us/region", "ratio");
    const int idle[] = { 0, 1, 4 };
    double base = 0;
    for (size_t c = 0; c < sizeof idle / sizeof idle[0]; c++) {
        pthread_t th[4];
        int made = 0;
        g_quit = 0;
        regions(n / 20 + 1, t); /* this thread's team up */
        for (; made < idle[c]; made++)
            if (pthread_create(&th[made], NULL, idle_team, NULL))
                break;
        struct timespec settle = { 0, 200000000 };
        nanosleep(&settle, NULL); /* their teams made and asleep */
        double t0 = now_s();
        regions(n, t);
        double us = (now_s() - t0) / n * 1e6;
        if (c == 0)
            base = us;
        printf("%-12d %12.2f %8.2f\n", made, us, us / base);
        pthread_mutex_lock(&g_mu);
        g_quit = 1;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        for (int i = 0; i < made; i++)
            pthread_join(th[i], NULL);
    }
    return 0;
}
