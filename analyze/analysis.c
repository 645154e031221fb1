/* analysis.c -- what every analysis shares (see analysis.h). */
#include "analyze/analysis.h"

#include <string.h>

int analyze_format_parse(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "text") == 0)
        return ANALYZE_TEXT;
    if (strcmp(s, "csv") == 0)
        return ANALYZE_CSV;
    if (strcmp(s, "json") == 0)
        return ANALYZE_JSON;
    return -1;
}
