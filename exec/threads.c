/* threads.c -- one intra-op pool: OpenMP, which the OpenMP build of OpenBLAS
 * shares, so BLAS calls and the engine's kernels never run two pools. */
#include "internal.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

static int g_intra;

int exec_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void exec_threads_set(int intra)
{
    if (intra <= 0)
        intra = exec_cores();
    g_intra = intra;
    omp_set_num_threads(intra);
    openblas_set_num_threads(intra);
}

int exec_threads_get(void) { return g_intra > 0 ? g_intra : exec_cores(); }

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
