/* bench_stats.h -- the order statistics the benchmarks report. */
#ifndef FATHOM_TESTS_BENCH_STATS_H
#define FATHOM_TESTS_BENCH_STATS_H
#include <stdlib.h>

/* qsort's comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v's n values (n > 0); sorts v. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
#endif
