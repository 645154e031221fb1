/* analysis.c -- what every analysis shares (see analysis.h). */
#include "analyze/analysis.h"

#include "base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *analyze_status_str(analyze_status s)
{
    switch (s) {
    case ANALYZE_OK: return "ok";
    case ANALYZE_ERR_NOMEM: return "out of memory";
    case ANALYZE_ERR_INPUT: return "bad input";
    case ANALYZE_ERR_IO: return "I/O error";
    }
    return "unknown status";
}

#define ANALYZE_ROW(name) extern const analyze_analysis analyze_row_##name;
#define ANALYZE_SINK_ROW(name, desc, help) ANALYZE_ROW(name)
#include "analyze/analyses.def"
#undef ANALYZE_ROW
#undef ANALYZE_SINK_ROW

const analyze_analysis *const analyze_analyses[] = {
#define ANALYZE_ROW(name) &analyze_row_##name,
#define ANALYZE_SINK_ROW(name, desc, help) ANALYZE_ROW(name)
#include "analyze/analyses.def"
#undef ANALYZE_ROW
#undef ANALYZE_SINK_ROW
};
const size_t analyze_nanalyses = sizeof analyze_analyses / sizeof analyze_analyses[0];

const analyze_analysis *analyze_analysis_find(const char *name)
{
    for (size_t i = 0; name && i < analyze_nanalyses; i++)
        if (strcmp(analyze_analyses[i]->name, name) == 0)
            return analyze_analyses[i];
    return NULL;
}

analyze_status analyze_profile_set_create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    analyze_profile_set *s = base_calloc(1, sizeof *s);
    if (!s)
        return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    s->p = p, s->n = n;
    *out = s;
    return ANALYZE_OK;
}

void analyze_profile_set_destroy(void *set) { base_free(set); }
