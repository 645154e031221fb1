/* analysis.h -- what every analysis shares: the output format. */
#ifndef FATHOM_ANALYZE_ANALYSIS_H
#define FATHOM_ANALYZE_ANALYSIS_H

typedef enum analyze_format { ANALYZE_TEXT, ANALYZE_CSV, ANALYZE_JSON } analyze_format;

/* "text" | "csv" | "json" -> format, -1 otherwise. */
int analyze_format_parse(const char *s);

#endif
