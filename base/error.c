/* error.c -- the calling thread's error message (error.h). */
#include "base/error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char t_msg[BASE_ERRMSG_MAX];

const char *base_errmsg(void) { return t_msg[0] ? t_msg : "no error"; }

int base_vfail(int status, const char *fmt, va_list ap)
{
    /* formatted aside first: the arguments may point into t_msg */
    char buf[BASE_ERRMSG_MAX];
    vsnprintf(buf, sizeof buf, fmt, ap);
    memcpy(t_msg, buf, sizeof t_msg);
    return status;
}

int base_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vfail(status, fmt, ap);
    va_end(ap);
    return status;
}

int base_fail_cause(int status, const char *fmt, ...)
{
    char buf[BASE_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof buf)
        snprintf(buf + n, sizeof buf - (size_t)n, "%s", t_msg);
    memcpy(t_msg, buf, sizeof t_msg);
    return status;
}

int base_fail_into(char *msg, size_t len, int status, const char *fmt, ...)
{
    if (!len)
        return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return status;
}

static int is_control(char c) { return (unsigned char)c < 0x20 || c == 0x7f; }

void base_scrub(char *s)
{
    for (; *s; s++)
        if (is_control(*s))
            *s = '?';
}

const char *base_printable(const char *s, char *buf, size_t len)
{
    const char *p = s;
    while (*p && !is_control(*p))
        p++;
    if (!*p || len == 0)
        return s;
    snprintf(buf, len, "%s", s);
    base_scrub(buf);
    return buf;
}

int base_errmsg_oneline(int status)
{
    base_scrub(t_msg);
    return status;
}

void base_errmsg_clear(void) { t_msg[0] = '\0'; }
