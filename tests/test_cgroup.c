/* test_cgroup.c -- the CPU quota and the memory limit of a process's
 * cgroups (exec_cgroup_cpu_limit, exec_cgroup_mem_limit) on made-up /proc
 * and /sys trees: cgroup v2's cpu.max and memory.max, v1's cpu and memory
 * controllers beside an unused v2 mount (Debian 12's hybrid layout), a
 * container's mount of its own part of the hierarchy, the least limit
 * along the path, and files that say nothing or nonsense; and the default
 * thread count (exec_cpus) within the CPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"

static char g_root[256];

/* Writes text to root/rel, making its folders. */
static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    for (char *p = path + strlen(g_root) + 1; (p = strchr(p, '/')); p++) {
        *p = 0;
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/fathom-cgroup-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(g_root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    return system(cmd) == 0 ? 0 : -1;
}

#define V2_MOUNT "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n"

/* cgroup v2: cpu.max "max" in the process's cgroup, a quota above it. */
static void test_v2_least_on_path(void **state)
{
    (void)state;
    put("proc/self/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n" V2_MOUNT);
    put("proc/self/cgroup", "0::/system.slice/job.service\n");
    put("sys/fs/cgroup/system.slice/job.service/cpu.max", "max 100000\n");
    put("sys/fs/cgroup/system.slice/cpu.max", "250000 100000\n");
    double l = exec_cgroup_cpu_limit(g_root);
    printf("v2, 2.5 CPUs on the parent: %.3f\n", l);
    assert_true(fabs(l - 2.5) < 1e-9);
    put("sys/fs/cgroup/system.slice/job.service/cpu.max", "50000 100000\n"); /* the child's is less */
    assert_true(fabs(exec_cgroup_cpu_limit(g_root) - 0.5) < 1e-9);
    put("sys/fs/cgroup/system.slice/job.service/cpu.max", "max 100000\n");
    put("sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
    assert_true(exec_cgroup_cpu_limit(g_root) == 0); /* none anywhere */
    put("sys/fs/cgroup/system.slice/cpu.max", "lots\n");
    assert_true(exec_cgroup_cpu_limit(g_root) == 0); /* nonsense is none */
}

/* cgroup v1's cpu controller (Debian 12 with the hybrid layout; the v2
 * mount there has no cpu.max), the controller mounted with cpuacct. */
static void test_v1_hybrid(void **state)
{
    (void)state;
    put("proc/self/mountinfo", "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                               "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
                               "33 31 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
                               "34 31 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    put("proc/self/cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put("sys/fs/cgroup/memory/docker/abc/cpu.cfs_quota_us", "10000\n"); /* not the cpu controller's: unread */
    put("sys/fs/cgroup/memory/docker/abc/cpu.cfs_period_us", "100000\n");
    double l = exec_cgroup_cpu_limit(g_root);
    printf("v1, 1.5 CPUs: %.3f\n", l);
    assert_true(fabs(l - 1.5) < 1e-9);
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    assert_true(exec_cgroup_cpu_limit(g_root) == 0);
}

/* A container without a cgroup namespace: its mount is its own part of
 * the hierarchy (the mount's root /docker/abc), the path the same. */
static void test_v1_container_mount(void **state)
{
    (void)state;
    put("proc/self/mountinfo", "40 39 0:29 /docker/abc /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup ro,cpu\n");
    put("proc/self/cgroup", "3:cpu:/docker/abc\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "200000\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    double l = exec_cgroup_cpu_limit(g_root);
    printf("v1 container mount, 2 CPUs: %.3f\n", l);
    assert_true(fabs(l - 2.0) < 1e-9);
    put("proc/self/cgroup", "3:cpu:/other\n"); /* a cgroup outside the mount: nothing to read */
    assert_true(exec_cgroup_cpu_limit(g_root) == 0);
}

/* Memory: v2's memory.max (the least up the path, "max" none), v1's
 * memory.limit_in_bytes (about 2^63 where none is set), each read from
 * the memory controller's hierarchy, not the cpu one's. */
static void test_memory(void **state)
{
    (void)state;
    put("proc/self/mountinfo", V2_MOUNT);
    put("proc/self/cgroup", "0::/app/job\n");
    put("sys/fs/cgroup/app/job/memory.max", "max\n");
    put("sys/fs/cgroup/app/memory.max", "268435456\n");
    double l = exec_cgroup_mem_limit(g_root);
    printf("v2 memory, 256 MiB on the parent: %.0f\n", l);
    assert_true(l == 268435456.0);
    put("sys/fs/cgroup/app/memory.max", "max\n");
    assert_true(exec_cgroup_mem_limit(g_root) == 0);
    put("proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
                               "33 31 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    put("proc/self/cgroup", "4:memory:/box\n3:cpu:/\n");
    put("sys/fs/cgroup/memory/box/memory.limit_in_bytes", "1073741824\n");
    put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/fs/cgroup/cpu/box/memory.limit_in_bytes", "1024\n"); /* not the memory controller's: unread */
    l = exec_cgroup_mem_limit(g_root);
    printf("v1 memory, 1 GiB: %.0f\n", l);
    assert_true(l == 1073741824.0);
    put("sys/fs/cgroup/memory/box/memory.limit_in_bytes", "9223372036854771712\n");
    assert_true(exec_cgroup_mem_limit(g_root) == 0);
    put("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    assert_true(exec_cgroup_cpu_limit(g_root) == 0); /* and no CPU quota there */
}

/* The machine's memory and swap from proc/meminfo, in bytes. */
static void test_meminfo(void **state)
{
    (void)state;
    put("proc/meminfo", "MemTotal:       24684136 kB\nMemFree:        23254352 kB\nSwapCached:            0 kB\n"
                        "SwapTotal:       1048572 kB\nSwapFree:        1048572 kB\n");
    double m = exec_machine_memory(g_root);
    printf("meminfo: %.0f bytes\n", m);
    assert_true(m == (24684136.0 + 1048572.0) * 1024);
    put("proc/meminfo", "MemFree: 1 kB\n"); /* no MemTotal: unknown */
    assert_true(exec_machine_memory(g_root) == 0);
    /* this machine's: the plan limit is no more than it (or a cgroup's below it) */
    const char *source = NULL;
    double limit = exec_memory_limit(&source), here = exec_machine_memory("");
    printf("this process: the plan limit %.0f bytes (%s), the machine's %.0f\n", limit, source ? source : "none", here);
    assert_true(here > 0 && limit > 0 && limit <= here && source);
}

/* No cgroup files at all (not Linux's /proc, or a sandbox): none. */
static void test_nothing(void **state)
{
    (void)state;
    char empty[300];
    snprintf(empty, sizeof empty, "%s/nothing", g_root);
    assert_true(exec_cgroup_cpu_limit(empty) == 0);
    assert_true(exec_cgroup_mem_limit(empty) == 0);
    assert_true(exec_machine_memory(empty) == 0);
}

/* This process: the default threads are at least one and at most the
 * CPUs, and fewer only under a quota below them. */
static void test_this_process(void **state)
{
    (void)state;
    double l = exec_cgroup_cpu_limit("");
    int cpus = exec_cpus(), cores = exec_cores();
    printf("this process: %d CPUs, quota %.2f, %d threads by default\n", cores, l, cpus);
    assert_true(cpus >= 1 && cpus <= cores);
    if (l <= 0 || ceil(l) >= cores)
        assert_int_equal(cpus, cores);
    else
        assert_int_equal(cpus, (int)fmax(1, ceil(l)));
    assert_int_equal(exec_threads_get(), cpus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_least_on_path),
        cmocka_unit_test(test_v1_hybrid),
        cmocka_unit_test(test_v1_container_mount),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_meminfo),
        cmocka_unit_test(test_nothing),
        cmocka_unit_test(test_this_process),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
