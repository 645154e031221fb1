/* locate.h -- where the driver finds its installed parts: the trace probe
 * (libfathom-tp.so) and the Babeltrace2 plugin (fathom-bt2.so).  Both are
 * looked for relative to the running executable first, so a tree installed
 * with `cmake --install build --prefix P` works wherever P is moved; then at
 * the configured install path and in the build tree. */
#ifndef FATHOM_TRACER_LOCATE_H
#define FATHOM_TRACER_LOCATE_H
#include <stddef.h>

#define TRACER_PLUGIN_NAME "fathom-bt2.so"

/* The folder of the running executable (/proc/self/exe).  Returns 0, or -1
 * when it cannot be read or does not fit in len bytes. */
int tracer_self_dir(char *dir, size_t len);
/* Candidate i (0, 1, ...) of the probe library's path, in search order:
 * next to the executable (the build tree's layout), the install layout
 * relative to the executable, the configured install path, the build path.
 * Writes it to path and returns path; NULL past the last candidate (or for
 * a candidate that does not fit, which is skipped by the caller's loop). */
const char *tracer_probe_candidate(int i, char *path, size_t len);
/* The first candidate that is a readable file, written to path; 0, or -1
 * when none is (path then holds ""). */
int tracer_probe_locate(char *path, size_t len);
/* The folder holding the Babeltrace2 plugin fathom-bt2.so, searched the
 * same way (relative to the executable, then the configured install
 * folder); 0, or -1 when none holds it (dir then holds ""). */
int tracer_plugin_locate(char *dir, size_t len);
#endif
