/* fuzz_common.h -- what the file-based fuzz targets share: the input as a
 * file in a private folder (the readers take paths), extraction into that
 * folder ($TMPDIR) under a small bound, and the check that nothing is left
 * behind there after each input. */
#ifndef FATHOM_FUZZ_COMMON_H
#define FATHOM_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <dirent.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[4096], fz_tmp[4096], fz_input[4200];

/* At a normal exit the private folder goes (it is empty but for the last
 * input); after a finding it stays, beside the artifact. */
static void fz_fini(void)
{
    unlink(fz_input);
    rmdir(fz_tmp);
    rmdir(fz_dir);
}

/* Once: a private folder under $FUZZ_TMP, $TMPDIR or /tmp. */
static void fz_init(void)
{
    const char *base = getenv("FUZZ_TMP");

    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(fz_dir, sizeof fz_dir, "%s/fathom-fuzz-XXXXXX", base);
    if (!mkdtemp(fz_dir))
        abort();
    snprintf(fz_tmp, sizeof fz_tmp, "%s/tmp", fz_dir);
    snprintf(fz_input, sizeof fz_input, "%s/input", fz_dir);
    if (mkdir(fz_tmp, 0700) != 0)
        abort();
    setenv("TMPDIR", fz_tmp, 1);
    atexit(fz_fini);
    /* a bomb must be refused, not fill the disk: 64 MiB is plenty for
	 * any input libFuzzer makes (-max_len) */
    setenv("FATHOM_MAX_EXTRACT", "64M", 1);
}

static void fz_write(const uint8_t *data, size_t size)
{
    FILE *f = fopen(fz_input, "wb");

    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
        abort();
}

/* Abort if the reader left anything in its $TMPDIR. */
static void fz_check_clean(void)
{
    DIR *d = opendir(fz_tmp);
    struct dirent *e;

    if (!d)
        abort();
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            fprintf(stderr, "left behind: %s/%s\n", fz_tmp, e->d_name);
            abort();
        }
    closedir(d);
}

#endif
