/*
 * fathom archive library (see archive.h).  Depends on libarchive alone.
 */
#define _GNU_SOURCE /* mkdtemp, renameat2, O_NOFOLLOW, nftw, strndup */

#include "archive.h"
#include "output.h"

#include <archive.h>
#include <archive_entry.h>

/* tracer/ must never be on the include path: it would shadow libarchive's
 * <archive.h> with ours.  Include this header as "tracer/archive.h". */
#ifndef ARCHIVE_VERSION_NUMBER
#error "<archive.h> resolved to tracer/archive.h; do not add tracer/ to the include path"
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define COPY_BUF_SIZE (64 * 1024)
#define MANIFEST_MAX_BYTES (1024 * 1024)
#define MAX_DEPTH 64
#define MAX_NAME_COMPONENT 255
#define MAX_SUFFIX 10000
#define ARCHIVE_TMP_PREFIX ".fathom-tmp-"
#define EXTRACT_PREFIX "fathom-trace-"

/* ------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------- */

const char *tracer_archive_strstatus(tracer_archive_status st)
{
	switch (st) {
	case TRACER_ARCHIVE_OK: return "ok";
	case TRACER_ARCHIVE_EINVAL: return "invalid argument";
	case TRACER_ARCHIVE_ENOMEM: return "out of memory";
	case TRACER_ARCHIVE_EIO: return "I/O error";
	case TRACER_ARCHIVE_EEXIST: return "already exists";
	case TRACER_ARCHIVE_EFORMAT: return "bad format";
	case TRACER_ARCHIVE_EUNSAFE: return "unsafe archive entry";
	case TRACER_ARCHIVE_ELIMIT: return "limit exceeded";
	case TRACER_ARCHIVE_ENOTRACE: return "no CTF trace found";
	case TRACER_ARCHIVE_ENOSPC: return "no space left on device";
	}
	return "unknown status";
}

/* Format a one-line message into err (control bytes become '?'). */
__attribute__((format(printf, 4, 5)))
static tracer_archive_status set_err(char *err, size_t errlen,
				     tracer_archive_status st, const char *fmt,
				     ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return st;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	for (char *p = err; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	return st;
}

static tracer_archive_status errno_status(int e)
{
	if (e == ENOMEM)
		return TRACER_ARCHIVE_ENOMEM;
	if (e == EEXIST)
		return TRACER_ARCHIVE_EEXIST;
	return TRACER_ARCHIVE_EIO;
}

static char *str_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/* malloc'd "a/b" (a without trailing slashes, unless it is "/"). */
static char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p;

	while (la > 1 && a[la - 1] == '/')
		la--;
	p = malloc(la + 1 + lb + 1);
	if (!p)
		return NULL;
	memcpy(p, a, la);
	if (la == 0 || a[la - 1] != '/')
		p[la++] = '/';
	memcpy(p + la, b, lb + 1);
	return p;
}

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Manifest
 * ---------------------------------------------------------------------- */

struct tracer_manifest {
	size_t n, cap;
	char **keys;
	char **vals;
};

tracer_manifest *tracer_manifest_create(void)
{
	return calloc(1, sizeof(tracer_manifest));
}

void tracer_manifest_destroy(tracer_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->vals[i]);
	}
	free(m->keys);
	free(m->vals);
	free(m);
}

static bool key_valid(const char *key, size_t len)
{
	if (len == 0 || len > TRACER_MANIFEST_KEY_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];

		if (!isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
			return false;
	}
	return true;
}

static long manifest_find(const tracer_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->keys[i], key) == 0)
			return (long)i;
	}
	return -1;
}

static tracer_archive_status manifest_put(tracer_manifest *m, const char *key,
					  const char *value, bool replace,
					  char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char *k = NULL, *v = NULL;
	long idx;

	if (!m || !key || !value) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "manifest: NULL argument");
		goto cleanup;
	}
	if (!key_valid(key, strlen(key))) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "manifest: invalid key '%.*s' (want 1-%d of "
			     "[A-Za-z0-9._:-])", 64, key,
			     TRACER_MANIFEST_KEY_MAX);
		goto cleanup;
	}
	if (strlen(value) > TRACER_MANIFEST_VALUE_MAX) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "manifest: value of '%s' longer than %d bytes",
			     key, TRACER_MANIFEST_VALUE_MAX);
		goto cleanup;
	}
	v = str_dup(value);
	if (!v) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "manifest: out of memory");
		goto cleanup;
	}
	idx = manifest_find(m, key);
	if (idx >= 0) {
		if (!replace) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EEXIST,
				     "manifest: duplicate key '%s'", key);
			goto cleanup;
		}
		free(m->vals[idx]);
		m->vals[idx] = v;
		v = NULL;
		goto cleanup;
	}
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 16;
		char **nk = realloc(m->keys, ncap * sizeof(*nk));

		if (!nk) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "manifest: out of memory");
			goto cleanup;
		}
		m->keys = nk;
		char **nv = realloc(m->vals, ncap * sizeof(*nv));
		if (!nv) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "manifest: out of memory");
			goto cleanup;
		}
		m->vals = nv;
		m->cap = ncap;
	}
	k = str_dup(key);
	if (!k) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "manifest: out of memory");
		goto cleanup;
	}
	m->keys[m->n] = k;
	m->vals[m->n] = v;
	m->n++;
	k = NULL;
	v = NULL;
cleanup:
	free(k);
	free(v);
	return st;
}

tracer_archive_status tracer_manifest_add(tracer_manifest *m, const char *key,
					  const char *value, char *err,
					  size_t errlen)
{
	return manifest_put(m, key, value, false, err, errlen);
}

tracer_archive_status tracer_manifest_set(tracer_manifest *m, const char *key,
					  const char *value, char *err,
					  size_t errlen)
{
	return manifest_put(m, key, value, true, err, errlen);
}

tracer_archive_status tracer_manifest_set_u64(tracer_manifest *m,
					      const char *key, uint64_t value,
					      char *err, size_t errlen)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return manifest_put(m, key, buf, true, err, errlen);
}

const char *tracer_manifest_get(const tracer_manifest *m, const char *key)
{
	long idx;

	if (!m || !key)
		return NULL;
	idx = manifest_find(m, key);
	return idx >= 0 ? m->vals[idx] : NULL;
}

tracer_archive_status tracer_manifest_get_u64(const tracer_manifest *m,
					      const char *key, uint64_t *out)
{
	const char *v = tracer_manifest_get(m, key);
	uint64_t x = 0;

	if (!v || !out)
		return TRACER_ARCHIVE_EINVAL;
	if (*v == '\0')
		return TRACER_ARCHIVE_EFORMAT;
	for (const char *p = v; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return TRACER_ARCHIVE_EFORMAT;
		d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return TRACER_ARCHIVE_EFORMAT;
		x = x * 10 + d;
	}
	*out = x;
	return TRACER_ARCHIVE_OK;
}

/* Appends one line to the problem list (out, *used of outlen). */
__attribute__((format(printf, 4, 5)))
static void problem(char *out, size_t outlen, size_t *used, const char *fmt,
		    ...)
{
	va_list ap;
	int n;

	if (!out || *used + 1 >= outlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *used, outlen - *used, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*used += (size_t)n < outlen - *used ? (size_t)n : outlen - *used - 1;
	if (*used + 1 < outlen) {
		out[(*used)++] = '\n';
		out[*used] = '\0';
	}
}

/* Strict decimal u64: digits only, no overflow. */
static bool parse_u64(const char *v, uint64_t *out)
{
	uint64_t x = 0;

	if (!v || !*v)
		return false;
	for (const char *p = v; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return false;
		d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*out = x;
	return true;
}

/* YYYY-mm-ddTHH:MM:SSZ, a real date and time. */
static bool valid_created(const char *v)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30,
				     31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec;
	char z;
	int n = 0;

	if (strlen(v) != 20 ||
	    sscanf(v, "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi,
		   &sec, &z, &n) != 7 || n != 20 || z != 'Z')
		return false;
	for (int i = 0; i < 19; i++) {
		bool sep = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;

		if (!sep && !isdigit((unsigned char)v[i]))
			return false;
	}
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    h > 23 || mi > 59 || sec > 60)
		return false;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) ||
				    y % 400 == 0))
		return false;
	return true;
}

size_t tracer_manifest_check(const tracer_manifest *m, char *out,
			     size_t outlen)
{
	static const struct {
		const char *key;
		uint64_t lo, hi;
		bool required;
	} nums[] = {
		{ "schema", 1, TRACER_SCHEMA_MAX, true },
		{ "steps", 1, 100000000, false },
		{ "batch", 1, 1000000, false },
		{ "threads", 1, 4096, false },
		{ "inter", 1, 64, false },
		{ "seed", 0, UINT64_MAX, false },
		{ "events", 0, UINT64_MAX, false },
		{ "discarded", 0, UINT64_MAX, false },
		{ "ops", 0, UINT64_MAX, false },
		{ "op_time_ns", 0, UINT64_MAX, false },
	};
	static const char *const strs[] = { "preset", "host", "cpu", "blas",
					    "version" };
	size_t used = 0, n = 0;
	const char *v;

	if (out && outlen)
		out[0] = '\0';
	if (!m) {
		problem(out, outlen, &used, "no MANIFEST");
		return 1;
	}
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		uint64_t x;

		v = tracer_manifest_get(m, nums[i].key);
		if (!v) {
			if (nums[i].required) {
				problem(out, outlen, &used, "key '%s' is missing",
					nums[i].key);
				n++;
			}
			continue;
		}
		if (!parse_u64(v, &x) || x < nums[i].lo || x > nums[i].hi) {
			problem(out, outlen, &used,
				"key '%s': '%.40s' is not an integer in "
				"[%" PRIu64 ", %" PRIu64 "]", nums[i].key, v,
				nums[i].lo, nums[i].hi);
			n++;
		}
	}
	v = tracer_manifest_get(m, "model");
	if (!v || !*v) {
		problem(out, outlen, &used, "key 'model' is %s",
			v ? "empty" : "missing");
		n++;
	}
	v = tracer_manifest_get(m, "mode");
	if (!v || (strcmp(v, "train") && strcmp(v, "infer"))) {
		if (v)
			problem(out, outlen, &used,
				"key 'mode': '%.40s' is not train or infer", v);
		else
			problem(out, outlen, &used, "key 'mode' is missing");
		n++;
	}
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		v = tracer_manifest_get(m, strs[i]);
		if (v && strlen(v) > 512) {
			problem(out, outlen, &used,
				"key '%s': longer than 512 bytes", strs[i]);
			n++;
		}
	}
	v = tracer_manifest_get(m, "created");
	if (v && !valid_created(v)) {
		problem(out, outlen, &used,
			"key 'created': '%.40s' is not a UTC time "
			"YYYY-mm-ddTHH:MM:SSZ", v);
		n++;
	}
	for (size_t i = 0; i < m->n; i++) {
		uint64_t x;

		if (strncmp(m->keys[i], "events.", 7) == 0 &&
		    !parse_u64(m->vals[i], &x)) {
			problem(out, outlen, &used,
				"key '%s': '%.40s' is not an unsigned integer",
				m->keys[i], m->vals[i]);
			n++;
		}
	}
	return n;
}

int tracer_manifest_check_schema(const tracer_manifest *m,
				 uint32_t trace_schema, char *msg,
				 size_t msglen)
{
	uint64_t x;

	if (msg && msglen)
		msg[0] = '\0';
	if (!m || !parse_u64(tracer_manifest_get(m, "schema"), &x))
		return 0;
	if (x == trace_schema)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen,
			 "the MANIFEST says schema %" PRIu64 " but the trace's "
			 "run_begin says schema %" PRIu32, x, trace_schema);
	return 1;
}

size_t tracer_manifest_count(const tracer_manifest *m)
{
	return m ? m->n : 0;
}

const char *tracer_manifest_key_at(const tracer_manifest *m, size_t i)
{
	return (m && i < m->n) ? m->keys[i] : NULL;
}

const char *tracer_manifest_value_at(const tracer_manifest *m, size_t i)
{
	return (m && i < m->n) ? m->vals[i] : NULL;
}

tracer_archive_status tracer_manifest_serialize(const tracer_manifest *m,
						char **out, size_t *out_len,
						char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	size_t cap = 1, len = 0;
	char *buf = NULL;

	if (!m || !out) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "manifest: NULL argument");
		goto cleanup;
	}
	/* Worst case: every value byte becomes \xHH (4 bytes). */
	for (size_t i = 0; i < m->n; i++)
		cap += strlen(m->keys[i]) + 1 + 4 * strlen(m->vals[i]) + 1;
	buf = malloc(cap);
	if (!buf) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "manifest: out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < m->n; i++) {
		size_t kl = strlen(m->keys[i]);

		memcpy(buf + len, m->keys[i], kl);
		len += kl;
		buf[len++] = '=';
		for (const char *p = m->vals[i]; *p; p++) {
			unsigned char c = (unsigned char)*p;

			switch (c) {
			case '\\': buf[len++] = '\\'; buf[len++] = '\\'; break;
			case '\n': buf[len++] = '\\'; buf[len++] = 'n'; break;
			case '\r': buf[len++] = '\\'; buf[len++] = 'r'; break;
			case '\t': buf[len++] = '\\'; buf[len++] = 't'; break;
			default:
				if (c < 0x20 || c == 0x7f) {
					len += (size_t)snprintf(buf + len,
								cap - len,
								"\\x%02x", c);
				} else {
					buf[len++] = (char)c;
				}
			}
		}
		buf[len++] = '\n';
	}
	buf[len] = '\0';
	*out = buf;
	if (out_len)
		*out_len = len;
	buf = NULL;
cleanup:
	free(buf);
	return st;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

tracer_archive_status tracer_manifest_parse(const char *text, size_t len,
					    const char *name,
					    tracer_manifest **out, char *err,
					    size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	tracer_manifest *m = NULL;
	char *val = NULL;
	size_t pos = 0, lineno = 0;

	if (!name)
		name = TRACER_MANIFEST_FILE;
	if ((!text && len) || !out) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "manifest: NULL argument");
		goto cleanup;
	}
	*out = NULL;
	if (len > MANIFEST_MAX_BYTES) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
			     "%s: larger than %d bytes", name,
			     MANIFEST_MAX_BYTES);
		goto cleanup;
	}
	if (text && memchr(text, '\0', len)) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			     "%s: contains a NUL byte", name);
		goto cleanup;
	}
	m = tracer_manifest_create();
	val = malloc(len + 1);
	if (!m || !val) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "manifest: out of memory");
		goto cleanup;
	}
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		const char *eq;
		size_t kl, vl = 0;
		char key[TRACER_MANIFEST_KEY_MAX + 1];

		pos += ll + (nl ? 1 : 0);
		lineno++;
		if (ll > 0 && line[ll - 1] == '\r')
			ll--;
		if (ll == 0 || line[0] == '#')
			continue;
		eq = memchr(line, '=', ll);
		if (!eq) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
				     "%s:%zu: expected key=value", name,
				     lineno);
			goto cleanup;
		}
		kl = (size_t)(eq - line);
		if (!key_valid(line, kl)) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
				     "%s:%zu: invalid key '%.*s'", name,
				     lineno, (int)(kl > 64 ? 64 : kl), line);
			goto cleanup;
		}
		memcpy(key, line, kl);
		key[kl] = '\0';
		for (const char *p = eq + 1; p < line + ll; p++) {
			unsigned char c = (unsigned char)*p;

			if (c < 0x20 && c != '\t') {
				st = set_err(err, errlen,
					     TRACER_ARCHIVE_EFORMAT,
					     "%s:%zu: control byte 0x%02x in "
					     "value of '%s'", name, lineno, c,
					     key);
				goto cleanup;
			}
			if (c != '\\') {
				val[vl++] = (char)c;
				continue;
			}
			if (++p >= line + ll) {
				st = set_err(err, errlen,
					     TRACER_ARCHIVE_EFORMAT,
					     "%s:%zu: dangling '\\' in value "
					     "of '%s'", name, lineno, key);
				goto cleanup;
			}
			switch (*p) {
			case '\\': val[vl++] = '\\'; break;
			case 'n': val[vl++] = '\n'; break;
			case 'r': val[vl++] = '\r'; break;
			case 't': val[vl++] = '\t'; break;
			case 'x': {
				int hi = p + 1 < line + ll ? hexval(p[1]) : -1;
				int lo = p + 2 < line + ll ? hexval(p[2]) : -1;

				if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
					st = set_err(err, errlen,
						     TRACER_ARCHIVE_EFORMAT,
						     "%s:%zu: bad \\x escape in "
						     "value of '%s'", name,
						     lineno, key);
					goto cleanup;
				}
				val[vl++] = (char)(hi * 16 + lo);
				p += 2;
				break;
			}
			default:
				st = set_err(err, errlen,
					     TRACER_ARCHIVE_EFORMAT,
					     "%s:%zu: unknown escape '\\%c' in "
					     "value of '%s'", name, lineno,
					     *p, key);
				goto cleanup;
			}
		}
		val[vl] = '\0';
		st = manifest_put(m, key, val, false, NULL, 0);
		if (st == TRACER_ARCHIVE_EEXIST) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
				     "%s:%zu: duplicate key '%s'", name,
				     lineno, key);
			goto cleanup;
		}
		if (st == TRACER_ARCHIVE_EINVAL) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
				     "%s:%zu: value of '%s' longer than %d "
				     "bytes", name, lineno, key,
				     TRACER_MANIFEST_VALUE_MAX);
			goto cleanup;
		}
		if (st != TRACER_ARCHIVE_OK) {
			st = set_err(err, errlen, st, "manifest: out of memory");
			goto cleanup;
		}
	}
	*out = m;
	m = NULL;
cleanup:
	free(val);
	tracer_manifest_destroy(m);
	return st;
}

/* Read at most MANIFEST_MAX_BYTES from fd and parse; takes no ownership. */
static tracer_archive_status manifest_read_fd(int fd, const char *name,
					      tracer_manifest **out, char *err,
					      size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char *buf = malloc(MANIFEST_MAX_BYTES + 1);
	size_t len = 0;

	if (!buf) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", name);
		goto cleanup;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, MANIFEST_MAX_BYTES + 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			st = set_err(err, errlen, TRACER_ARCHIVE_EIO,
				     "%s: %s", name, strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > MANIFEST_MAX_BYTES) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
				     "%s: larger than %d bytes", name,
				     MANIFEST_MAX_BYTES);
			goto cleanup;
		}
	}
	st = tracer_manifest_parse(buf, len, name, out, err, errlen);
cleanup:
	free(buf);
	return st;
}

tracer_archive_status tracer_manifest_read_file(const char *path,
						tracer_manifest **out,
						char *err, size_t errlen)
{
	tracer_archive_status st;
	int fd = -1;

	if (!path || !out)
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "manifest: NULL argument");
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		st = set_err(err, errlen, errno_status(errno), "%s: %s", path,
			     strerror(errno));
		goto cleanup;
	}
	st = manifest_read_fd(fd, path, out, err, errlen);
cleanup:
	if (fd >= 0)
		close(fd);
	return st;
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static tracer_archive_status ar_fail(struct archive *a, const char *what,
				     char *err, size_t errlen)
{
	const char *msg = archive_error_string(a);

	return set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", what,
		       msg ? msg : "libarchive error");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted malloc'd names of dirfd's entries except . and ..; closes dirfd. */
static tracer_archive_status list_dir(int dirfd, const char *shown,
				      char ***names_out, size_t *n_out,
				      char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	DIR *d = fdopendir(dirfd);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", shown,
			     strerror(errno));
		close(dirfd);
		goto cleanup;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				st = set_err(err, errlen, TRACER_ARCHIVE_EIO,
					     "%s: %s", shown, strerror(errno));
				goto cleanup;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn = realloc(names, ncap * sizeof(*nn));

			if (!nn) {
				st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
					     "%s: out of memory", shown);
				goto cleanup;
			}
			names = nn;
			cap = ncap;
		}
		names[n] = str_dup(de->d_name);
		if (!names[n]) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "%s: out of memory", shown);
			goto cleanup;
		}
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	*names_out = names;
	*n_out = n;
	names = NULL;
	n = 0;
cleanup:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (d)
		closedir(d);
	return st;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static tracer_archive_status add_file(struct archive *a, int dirfd,
				      const char *name, const char *src,
				      const char *arname, char *err,
				      size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	struct archive_entry *e = NULL;
	char *buf = NULL;
	int fd = -1;
	struct stat sb;
	int64_t left;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", src,
			     strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(sb.st_mode)) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "%s: not a regular file", src);
		goto cleanup;
	}
	e = archive_entry_new();
	buf = malloc(COPY_BUF_SIZE);
	if (!e || !buf) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", src);
		goto cleanup;
	}
	archive_entry_set_pathname(e, arname);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, sb.st_mode & 0644);
	archive_entry_set_size(e, sb.st_size);
	archive_entry_set_mtime(e, sb.st_mtime, 0);
	if (archive_write_header(a, e) < ARCHIVE_WARN) {
		st = ar_fail(a, src, err, errlen);
		goto cleanup;
	}
	left = sb.st_size;
	while (left > 0) {
		size_t want = left < COPY_BUF_SIZE ? (size_t)left : COPY_BUF_SIZE;
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s",
				     src, strerror(errno));
			goto cleanup;
		}
		if (n == 0) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EIO,
				     "%s: file shrank while archiving", src);
			goto cleanup;
		}
		if (archive_write_data(a, buf, (size_t)n) != n) {
			st = ar_fail(a, src, err, errlen);
			goto cleanup;
		}
		left -= n;
	}
cleanup:
	free(buf);
	archive_entry_free(e);
	if (fd >= 0)
		close(fd);
	return st;
}

static tracer_archive_status add_dir_entry(struct archive *a,
					   const char *arname, mode_t mode,
					   time_t mtime, char *err,
					   size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	struct archive_entry *e = archive_entry_new();

	if (!e) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", arname);
		goto cleanup;
	}
	archive_entry_set_pathname(e, arname);
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, (mode & 0755) | 0700);
	archive_entry_set_mtime(e, mtime, 0);
	if (archive_write_header(a, e) < ARCHIVE_WARN)
		st = ar_fail(a, arname, err, errlen);
cleanup:
	archive_entry_free(e);
	return st;
}

/* Archive the contents of dirfd (takes ownership) as `arprefix/...`. */
static tracer_archive_status add_tree(struct archive *a, int dirfd,
				      const char *src, const char *arprefix,
				      int depth, char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char **names = NULL;
	size_t n = 0;
	int lfd = -1;

	if (depth > MAX_DEPTH) {
		close(dirfd);
		return set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
			       "%s: directories nested deeper than %d", src,
			       MAX_DEPTH);
	}
	lfd = dup(dirfd);
	if (lfd < 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", src,
			     strerror(errno));
		goto cleanup;
	}
	st = list_dir(lfd, src, &names, &n, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	for (size_t i = 0; i < n && st == TRACER_ARCHIVE_OK; i++) {
		char *sp = path_join(src, names[i]);
		char *ap = path_join(arprefix, names[i]);
		struct stat sb;

		if (!sp || !ap) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "%s: out of memory", src);
		} else if (fstatat(dirfd, names[i], &sb,
				   AT_SYMLINK_NOFOLLOW) != 0) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s",
				     sp, strerror(errno));
		} else if (S_ISREG(sb.st_mode)) {
			st = add_file(a, dirfd, names[i], sp, ap, err, errlen);
		} else if (S_ISDIR(sb.st_mode)) {
			int sub = openat(dirfd, names[i],
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);

			if (sub < 0) {
				st = set_err(err, errlen, TRACER_ARCHIVE_EIO,
					     "%s: %s", sp, strerror(errno));
			} else {
				st = add_dir_entry(a, ap, sb.st_mode,
						   sb.st_mtime, err, errlen);
				if (st == TRACER_ARCHIVE_OK)
					st = add_tree(a, sub, sp, ap,
						      depth + 1, err, errlen);
				else
					close(sub);
			}
		} else {
			st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
				     "%s: not a regular file or directory "
				     "(links and special files are not "
				     "archived)", sp);
		}
		free(sp);
		free(ap);
	}
cleanup:
	free_names(names, n);
	close(dirfd);
	return st;
}

/* Write the whole archive to the open fd. */
static tracer_archive_status write_archive_fd(int fd, const char *shown,
					      const char *ctf_dir,
					      const tracer_manifest *m,
					      char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	struct archive *a = NULL;
	struct archive_entry *e = NULL;
	char *text = NULL;
	size_t tlen = 0;
	int dirfd = -1;
	struct stat sb;
	time_t now = time(NULL);

	dirfd = open(ctf_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || fstat(dirfd, &sb) != 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", ctf_dir,
			     strerror(errno));
		goto cleanup;
	}
	st = tracer_manifest_serialize(m, &text, &tlen, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	a = archive_write_new();
	e = archive_entry_new();
	if (!a || !e) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", shown);
		goto cleanup;
	}
	if (archive_write_add_filter_zstd(a) < ARCHIVE_WARN ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		st = ar_fail(a, shown, err, errlen);
		goto cleanup;
	}
	archive_entry_set_pathname(e, TRACER_MANIFEST_FILE);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (int64_t)tlen);
	archive_entry_set_mtime(e, now, 0);
	if (archive_write_header(a, e) < ARCHIVE_WARN ||
	    archive_write_data(a, text, tlen) != (ssize_t)tlen) {
		st = ar_fail(a, shown, err, errlen);
		goto cleanup;
	}
	st = add_dir_entry(a, TRACER_ARCHIVE_TOPDIR, sb.st_mode, sb.st_mtime,
			   err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	st = add_tree(a, dirfd, ctf_dir, TRACER_ARCHIVE_TOPDIR, 0, err,
		      errlen);
	dirfd = -1; /* add_tree closed it */
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	if (archive_write_close(a) != ARCHIVE_OK) {
		st = ar_fail(a, shown, err, errlen);
		goto cleanup;
	}
	if (fsync(fd) != 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", shown,
			     strerror(errno));
		goto cleanup;
	}
cleanup:
	if (a)
		archive_write_free(a);
	archive_entry_free(e);
	free(text);
	if (dirfd >= 0)
		close(dirfd);
	return st;
}

/* Write the archive to a fresh `<tmpl_base>.tmpXXXXXX`; *tmp_out is malloc'd
 * and names a complete file on success; nothing is left on error. */
static tracer_archive_status write_tmp(const char *tmpl_base,
				       const char *ctf_dir,
				       const tracer_manifest *m,
				       char **tmp_out, int *slot_out,
				       char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	const char *slash = strrchr(tmpl_base, '/');
	size_t dl = slash ? (size_t)(slash - tmpl_base) + 1 : 0;
	char *tmp = malloc(dl + sizeof(ARCHIVE_TMP_PREFIX) + 32);
	tracer_cleanup_mask mask;
	int fd = -1, slot = -1;
	bool created = false;

	*tmp_out = NULL;
	if (!tmp) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", tmpl_base);
		goto cleanup;
	}
	/* `<folder>/.fathom-tmp-<pid>-XXXXXX`: a SIGKILLed writer's leftover
	 * is recognized (and removed) by the next writer in that folder. */
	memcpy(tmp, tmpl_base, dl);
	tmp[dl ? dl - 1 : 0] = '\0';
	tracer_cleanup_stale(dl ? (dl == 1 ? "/" : tmp) : ".",
			     ARCHIVE_TMP_PREFIX);
	if (dl)
		tmp[dl - 1] = '/';
	snprintf(tmp + dl, sizeof(ARCHIVE_TMP_PREFIX) + 32,
		 ARCHIVE_TMP_PREFIX "%ld-XXXXXX", (long)getpid());
	tracer_cleanup_block(&mask);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0)
		slot = tracer_cleanup_add(tmp, false);
	tracer_cleanup_unblock(&mask);
	if (fd < 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO,
			     "%s: cannot create temporary file: %s", tmpl_base,
			     strerror(errno));
		goto cleanup;
	}
	created = true;
	(void)fchmod(fd, 0644);
	st = write_archive_fd(fd, tmpl_base, ctf_dir, m, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	if (close(fd) != 0) {
		fd = -1;
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s",
			     tmpl_base, strerror(errno));
		goto cleanup;
	}
	fd = -1;
	*tmp_out = tmp;
	tmp = NULL;
cleanup:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		if (created)
			unlink(tmp);
		free(tmp);
	}
	if (st == TRACER_ARCHIVE_OK)
		*slot_out = slot; /* the caller forgets it once published */
	else
		tracer_cleanup_forget(slot);
	return st;
}

/* Give the finished temp file its final name without ever clobbering.
 * Returns EEXIST (and keeps tmp) if dst exists; removes tmp otherwise. */
static tracer_archive_status publish(const char *tmp, const char *dst,
				     char *err, size_t errlen)
{
	if (link(tmp, dst) == 0) {
		unlink(tmp);
		return TRACER_ARCHIVE_OK;
	}
	if (errno == EEXIST)
		return TRACER_ARCHIVE_EEXIST;
	if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS) {
		/* File systems without hard links: atomic no-replace rename. */
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst,
			      RENAME_NOREPLACE) == 0)
			return TRACER_ARCHIVE_OK;
		if (errno == EEXIST)
			return TRACER_ARCHIVE_EEXIST;
	}
	unlink(tmp);
	return set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", dst,
		       strerror(errno));
}

static bool write_args_ok(const char *ctf_dir, const tracer_manifest *m,
			  char *err, size_t errlen, tracer_archive_status *st)
{
	struct stat sb;

	if (!ctf_dir || !m) {
		*st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			      "archive write: NULL argument");
		return false;
	}
	if (stat(ctf_dir, &sb) != 0) {
		*st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s",
			      ctf_dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			      "%s: not a directory", ctf_dir);
		return false;
	}
	return true;
}

tracer_archive_status tracer_archive_write(const char *out_path,
					   const char *ctf_dir,
					   const tracer_manifest *m, char *err,
					   size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char *tmp = NULL;
	struct stat sb;
	int slot = -1;

	if (!out_path || !*out_path) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "archive write: no output path");
		goto cleanup;
	}
	if (!write_args_ok(ctf_dir, m, err, errlen, &st))
		goto cleanup;
	if (lstat(out_path, &sb) == 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EEXIST,
			     "%s: already exists (not overwriting)", out_path);
		goto cleanup;
	}
	st = write_tmp(out_path, ctf_dir, m, &tmp, &slot, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	st = publish(tmp, out_path, err, errlen);
	if (st == TRACER_ARCHIVE_EEXIST)
		st = set_err(err, errlen, TRACER_ARCHIVE_EEXIST,
			     "%s: already exists (not overwriting)", out_path);
cleanup:
	if (tmp) {
		unlink(tmp); /* no-op if published */
		free(tmp);
	}
	tracer_cleanup_forget(slot);
	return st;
}

static void name_part(char *dst, size_t cap, const char *src)
{
	size_t n = 0;

	if (!src || !*src)
		src = "unknown";
	for (; *src && n + 1 < cap; src++) {
		unsigned char c = (unsigned char)*src;

		dst[n++] = (isalnum(c) || c == '.' || c == '_' || c == '+')
				   ? (char)c
				   : '_';
	}
	dst[n] = '\0';
	if (dst[0] == '.')
		dst[0] = '_';
}

/* "<model>-<mode>-<preset>-<host>-<time>" without suffix. */
static tracer_archive_status default_stem(const tracer_manifest *m,
					  time_t when, char *buf,
					  size_t buflen, char *err,
					  size_t errlen)
{
	char model[64], mode[16], preset[32], host[64], ts[32];
	struct tm tm;
	int n;

	if (!m || !buf) {
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "archive name: NULL argument");
	}
	if (when == (time_t)-1)
		when = time(NULL);
	if (!gmtime_r(&when, &tm) ||
	    strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm) == 0) {
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "archive name: bad time");
	}
	name_part(model, sizeof(model), tracer_manifest_get(m, "model"));
	name_part(mode, sizeof(mode), tracer_manifest_get(m, "mode"));
	name_part(preset, sizeof(preset), tracer_manifest_get(m, "preset"));
	name_part(host, sizeof(host), tracer_manifest_get(m, "host"));
	n = snprintf(buf, buflen, "%s-%s-%s-%s-%s", model, mode, preset, host,
		     ts);
	if (n < 0 || (size_t)n >= buflen) {
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "archive name: buffer too small");
	}
	return TRACER_ARCHIVE_OK;
}

tracer_archive_status tracer_archive_default_name(const tracer_manifest *m,
						  time_t when, char *buf,
						  size_t buflen, char *err,
						  size_t errlen)
{
	char stem[256];
	tracer_archive_status st;
	int n;

	st = default_stem(m, when, stem, sizeof(stem), err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		return st;
	n = snprintf(buf, buflen, "%s%s", stem, TRACER_ARCHIVE_SUFFIX);
	if (n < 0 || (size_t)n >= buflen)
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "archive name: buffer too small");
	return TRACER_ARCHIVE_OK;
}

static tracer_archive_status candidate(const char *dir, const char *stem,
				       unsigned i, char *buf, size_t buflen,
				       char *err, size_t errlen)
{
	int n;

	if (i == 0)
		n = snprintf(buf, buflen, "%s/%s%s", dir, stem,
			     TRACER_ARCHIVE_SUFFIX);
	else
		n = snprintf(buf, buflen, "%s/%s-%u%s", dir, stem, i,
			     TRACER_ARCHIVE_SUFFIX);
	if (n < 0 || (size_t)n >= buflen)
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "archive path: buffer too small");
	return TRACER_ARCHIVE_OK;
}

tracer_archive_status tracer_archive_default_path(const char *dir,
						  const tracer_manifest *m,
						  time_t when, char *buf,
						  size_t buflen, char *err,
						  size_t errlen)
{
	char stem[256];
	tracer_archive_status st;

	if (!dir)
		dir = TRACER_ARCHIVE_DEFAULT_DIR;
	st = default_stem(m, when, stem, sizeof(stem), err, errlen);
	for (unsigned i = 0; st == TRACER_ARCHIVE_OK && i < MAX_SUFFIX; i++) {
		struct stat sb;

		st = candidate(dir, stem, i, buf, buflen, err, errlen);
		if (st == TRACER_ARCHIVE_OK && lstat(buf, &sb) != 0)
			return TRACER_ARCHIVE_OK;
	}
	if (st == TRACER_ARCHIVE_OK)
		st = set_err(err, errlen, TRACER_ARCHIVE_EEXIST,
			     "%s/%s: too many archives with this name", dir,
			     stem);
	return st;
}

tracer_archive_status tracer_archive_check_dir(const char *dir, char *err,
					       size_t errlen)
{
	size_t len, comp = 0;

	if (!dir || !*dir)
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "no folder given");
	len = strlen(dir);
	/* reasons first, so a cut message still gives them */
	if (len + 1 + 255 >= PATH_MAX)
		return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			       "folder path too long (%zu bytes; at most %d "
			       "with the archive's name): %.80s...", len,
			       PATH_MAX - 1 - 1 - 255, dir);
	for (const char *c = dir;; c++) {
		if (*c == '/' || *c == '\0') {
			if (comp > MAX_NAME_COMPONENT)
				return set_err(err, errlen,
					       TRACER_ARCHIVE_EINVAL,
					       "folder name too long (%zu "
					       "bytes; at most %d): %.80s...",
					       comp, MAX_NAME_COMPONENT, c - comp);
			comp = 0;
			if (*c == '\0')
				break;
		} else {
			comp++;
		}
	}
	return TRACER_ARCHIVE_OK;
}

/* mkdir -p (0755) */
static tracer_archive_status make_dirs(const char *dir, char *err,
				       size_t errlen)
{
	tracer_archive_status st = tracer_archive_check_dir(dir, err, errlen);
	char *p;

	if (st != TRACER_ARCHIVE_OK)
		return st;
	p = str_dup(dir);
	if (!p)
		return set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			       "%s: out of memory", dir);
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			int e = errno;

			st = set_err(err, errlen,
				     e == ENOSPC ? TRACER_ARCHIVE_ENOSPC
						 : TRACER_ARCHIVE_EIO,
				     "cannot create folder (%s): %s",
				     e == ENOSPC ? "no space left on device"
						 : strerror(e), p);
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return st;
}

tracer_archive_status tracer_archive_write_default(const char *dir,
						   const char *ctf_dir,
						   const tracer_manifest *m,
						   time_t when, char *out_path,
						   size_t out_len, char *err,
						   size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char stem[256];
	char *base = NULL, *tmp = NULL;
	char path[PATH_MAX];
	unsigned i;
	int slot = -1;

	if (!dir)
		dir = TRACER_ARCHIVE_DEFAULT_DIR;
	if (!write_args_ok(ctf_dir, m, err, errlen, &st))
		goto cleanup;
	st = default_stem(m, when, stem, sizeof(stem), err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	st = make_dirs(dir, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	st = candidate(dir, stem, 0, path, sizeof(path), err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	base = str_dup(path);
	if (!base) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", path);
		goto cleanup;
	}
	st = write_tmp(base, ctf_dir, m, &tmp, &slot, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	for (i = 0; i < MAX_SUFFIX; i++) {
		st = candidate(dir, stem, i, path, sizeof(path), err, errlen);
		if (st != TRACER_ARCHIVE_OK)
			goto cleanup;
		st = publish(tmp, path, err, errlen);
		if (st != TRACER_ARCHIVE_EEXIST)
			break;
	}
	if (st == TRACER_ARCHIVE_EEXIST)
		st = set_err(err, errlen, TRACER_ARCHIVE_EEXIST,
			     "%s: too many archives with this name", base);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	if (out_path && out_len) {
		if (strlen(path) >= out_len) {
			/* The archive exists; report its name truncated. */
			st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
				     "%s: written, but out_path buffer is too "
				     "small", path);
		}
		snprintf(out_path, out_len, "%s", path);
	}
cleanup:
	if (tmp) {
		unlink(tmp); /* no-op once published */
		free(tmp);
	}
	tracer_cleanup_forget(slot);
	free(base);
	return st;
}

/* ------------------------------------------------------------------------
 * Opening
 * ---------------------------------------------------------------------- */

struct tracer_trace {
	tracer_trace_kind kind;
	char *source;
	char *root;
	char *tmpdir; /* owned temporary directory, removed on close */
	int tmpslot;  /* its cleanup-registry slot (-1: none) */
	char **ctf;
	size_t nctf, capctf;
	tracer_manifest *manifest;
};

static int rm_cb(const char *path, const struct stat *sb, int flag,
		 struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *dir)
{
	nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(dir); /* in case nftw could not walk it */
}

void tracer_trace_close(tracer_trace *t)
{
	if (!t)
		return;
	if (t->tmpdir) {
		remove_tree(t->tmpdir);
		tracer_cleanup_forget(t->tmpslot);
		free(t->tmpdir);
	}
	for (size_t i = 0; i < t->nctf; i++)
		free(t->ctf[i]);
	free(t->ctf);
	free(t->source);
	free(t->root);
	tracer_manifest_destroy(t->manifest);
	free(t);
}

tracer_trace_kind tracer_trace_get_kind(const tracer_trace *t)
{
	return t ? t->kind : TRACER_TRACE_DIR;
}

const char *tracer_trace_source(const tracer_trace *t)
{
	return t ? t->source : NULL;
}

const char *tracer_trace_root(const tracer_trace *t)
{
	return t ? t->root : NULL;
}

size_t tracer_trace_ctf_count(const tracer_trace *t)
{
	return t ? t->nctf : 0;
}

const char *tracer_trace_ctf_path(const tracer_trace *t, size_t i)
{
	return (t && i < t->nctf) ? t->ctf[i] : NULL;
}

const tracer_manifest *tracer_trace_manifest(const tracer_trace *t)
{
	return t ? t->manifest : NULL;
}

static tracer_archive_status trace_add_ctf(tracer_trace *t, const char *path,
					   char *err, size_t errlen)
{
	char *p;

	if (t->nctf == t->capctf) {
		size_t ncap = t->capctf ? t->capctf * 2 : 8;
		char **n = realloc(t->ctf, ncap * sizeof(*n));

		if (!n)
			return set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				       "%s: out of memory", path);
		t->ctf = n;
		t->capctf = ncap;
	}
	p = str_dup(path);
	if (!p)
		return set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			       "%s: out of memory", path);
	t->ctf[t->nctf++] = p;
	return TRACER_ARCHIVE_OK;
}

/* Record every directory at or below `path` holding a regular `metadata`.
 * Symbolic links are not followed. */
static tracer_archive_status find_ctf(tracer_trace *t, const char *path,
				      int depth, char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char **names = NULL;
	size_t n = 0;
	int fd;

	if (depth > MAX_DEPTH)
		return set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
			       "%s: directories nested deeper than %d", path,
			       MAX_DEPTH);
	/* The root given by the user may be a symlink; nothing below it. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				(depth > 0 ? O_NOFOLLOW : 0));
	if (fd < 0)
		return set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s", path,
			       strerror(errno));
	st = list_dir(fd, path, &names, &n, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	for (size_t i = 0; i < n && st == TRACER_ARCHIVE_OK; i++) {
		char *sub = path_join(path, names[i]);
		struct stat sb;

		if (!sub) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "%s: out of memory", path);
			break;
		}
		if (lstat(sub, &sb) == 0) {
			if (S_ISREG(sb.st_mode) &&
			    strcmp(names[i], "metadata") == 0)
				st = trace_add_ctf(t, path, err, errlen);
			else if (S_ISDIR(sb.st_mode))
				st = find_ctf(t, sub, depth + 1, err, errlen);
		}
		free(sub);
	}
cleanup:
	free_names(names, n);
	return st;
}

static tracer_archive_status finish_ctf(tracer_trace *t, char *err,
					size_t errlen)
{
	tracer_archive_status st = find_ctf(t, t->root, 0, err, errlen);

	if (st != TRACER_ARCHIVE_OK)
		return st;
	if (t->nctf == 0)
		return set_err(err, errlen, TRACER_ARCHIVE_ENOTRACE,
			       "%s: no CTF trace found (no 'metadata' file)",
			       t->source);
	qsort(t->ctf, t->nctf, sizeof(*t->ctf), cmp_str);
	return TRACER_ARCHIVE_OK;
}

static tracer_archive_status open_dir(tracer_trace *t, char *err,
				      size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	char *mf = NULL;
	const char *base;
	size_t rl;
	struct stat sb;

	t->root = str_dup(t->source);
	if (!t->root) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", t->source);
		goto cleanup;
	}
	rl = strlen(t->root);
	while (rl > 1 && t->root[rl - 1] == '/')
		t->root[--rl] = '\0';
	st = finish_ctf(t, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	mf = path_join(t->root, TRACER_MANIFEST_FILE);
	if (!mf) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", t->source);
		goto cleanup;
	}
	base = strrchr(t->root, '/');
	base = base ? base + 1 : t->root;
	if (lstat(mf, &sb) != 0 && strcmp(base, TRACER_ARCHIVE_TOPDIR) == 0) {
		free(mf);
		mf = path_join(t->root, "../" TRACER_MANIFEST_FILE);
		if (!mf) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "%s: out of memory", t->source);
			goto cleanup;
		}
	}
	if (lstat(mf, &sb) == 0 && S_ISREG(sb.st_mode))
		st = tracer_manifest_read_file(mf, &t->manifest, err, errlen);
cleanup:
	free(mf);
	return st;
}

/* One-line description of a libarchive read error. */
static tracer_archive_status read_fail(struct archive *a, const char *src,
				       char *err, size_t errlen)
{
	const char *msg = archive_error_string(a);

	if (!msg)
		msg = "unknown libarchive error";
	if (strstr(msg, "Unrecognized archive format") ||
	    strstr(msg, "not recognized"))
		return set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			       "%s: not a trace archive or CTF directory "
			       "(unrecognized format)", src);
	if (strstr(msg, "runcat") || strstr(msg, "Premature") ||
	    strstr(msg, "nexpected end") || strstr(msg, "EOF"))
		return set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			       "%s: truncated archive (%s)", src, msg);
	switch (archive_errno(a)) {
	case EIO:
	case EACCES:
	case ENOENT:
	case EISDIR:
	case ENOMEM:
		return set_err(err, errlen, errno_status(archive_errno(a)),
			       "%s: %s", src, msg);
	default:
		return set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			       "%s: corrupt archive (%s)", src, msg);
	}
}

/* Why an entry is refused (NULL: acceptable type). */
static const char *bad_type(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return "hard link";
	if (archive_entry_symlink(e))
		return "symbolic link";
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
	case AE_IFDIR:
		return NULL;
	case AE_IFLNK: return "symbolic link";
	case AE_IFCHR: return "character device";
	case AE_IFBLK: return "block device";
	case AE_IFIFO: return "fifo";
	case AE_IFSOCK: return "socket";
	default: return "unsupported file type";
	}
}

/*
 * Split name into components in comp (a writable copy), validating it.
 * Returns NULL on success or a reason.  "." and empty components are
 * dropped.
 */
static const char *split_name(char *name, char **comps, size_t *ncomp,
			      size_t maxcomp)
{
	size_t n = 0;
	char *save = NULL;

	if (name[0] == '/')
		return "absolute path";
	for (char *c = strtok_r(name, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0)
			return "'..' component";
		if (strlen(c) > MAX_NAME_COMPONENT)
			return "name component too long";
		if (n == maxcomp)
			return "too deeply nested";
		comps[n++] = c;
	}
	*ncomp = n;
	return NULL;
}

typedef struct extract_state {
	struct archive *a;
	int rootfd;
	const char *src;
	const char *tmpbase;
	uint64_t total, max_total;
	char *buf;
} extract_state;

/* A failed write while extracting; a full disk is named as such. */
static tracer_archive_status write_fail(const extract_state *x,
					const char *entry, int e, char *err,
					size_t errlen)
{
	if (e == ENOSPC || e == EDQUOT)
		return set_err(err, errlen, TRACER_ARCHIVE_ENOSPC,
			       "%s: no space left on device in %s while "
			       "extracting '%s' (set TMPDIR to a larger "
			       "file system)", x->src, x->tmpbase, entry);
	return set_err(err, errlen, errno_status(e),
		       "%s: writing '%s': %s", x->src, entry, strerror(e));
}

static tracer_archive_status extract_entry(extract_state *x,
					   struct archive_entry *e, char *err,
					   size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	const char *raw = archive_entry_pathname(e);
	const char *why;
	char name[TRACER_TRACE_PATH_MAX + 1];
	char *comps[MAX_DEPTH + 1];
	size_t ncomp = 0, len;
	int dfd = x->rootfd, fd = -1;
	bool is_dir = archive_entry_filetype(e) == AE_IFDIR;

	if (!raw || !*raw)
		return set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
			       "%s: entry with an empty or unreadable name",
			       x->src);
	len = strlen(raw);
	if (len > TRACER_TRACE_PATH_MAX)
		return set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
			       "%s: entry name longer than %d bytes ('%.60s...')",
			       x->src, TRACER_TRACE_PATH_MAX, raw);
	why = bad_type(e);
	if (why)
		return set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
			       "%s: refusing entry '%s': %s", x->src, raw, why);
	memcpy(name, raw, len + 1);
	why = split_name(name, comps, &ncomp, MAX_DEPTH + 1);
	if (why)
		return set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
			       "%s: refusing entry '%s': %s", x->src, raw, why);
	if (ncomp == 0) {
		if (is_dir)
			return TRACER_ARCHIVE_OK; /* "./" itself */
		return set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
			       "%s: refusing entry '%s': empty name", x->src,
			       raw);
	}
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
	    (uint64_t)archive_entry_size(e) > x->max_total - x->total) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
			     "%s: entry '%s' would expand past the %" PRIu64
			     "-byte limit", x->src, raw, x->max_total);
		goto cleanup;
	}
	/* Walk/create parent directories without following anything. */
	for (size_t i = 0; i + 1 < ncomp || (is_dir && i < ncomp); i++) {
		int nfd;

		if (mkdirat(dfd, comps[i], 0700) != 0 && errno != EEXIST) {
			st = write_fail(x, raw, errno, err, errlen);
			goto cleanup;
		}
		nfd = openat(dfd, comps[i],
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			st = set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
				     "%s: refusing entry '%s': path conflicts "
				     "with an earlier entry (%s)", x->src, raw,
				     strerror(errno));
			goto cleanup;
		}
		if (dfd != x->rootfd)
			close(dfd);
		dfd = nfd;
	}
	if (is_dir)
		goto cleanup;
	fd = openat(dfd, comps[ncomp - 1],
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			st = set_err(err, errlen, TRACER_ARCHIVE_EUNSAFE,
				     "%s: refusing entry '%s': duplicate name",
				     x->src, raw);
		else
			st = write_fail(x, raw, errno, err, errlen);
		goto cleanup;
	}
	for (;;) {
		la_ssize_t n = archive_read_data(x->a, x->buf, COPY_BUF_SIZE);

		if (n == 0)
			break;
		if (n < 0) {
			st = read_fail(x->a, x->src, err, errlen);
			goto cleanup;
		}
		if ((uint64_t)n > x->max_total - x->total) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
				     "%s: expands past the %" PRIu64
				     "-byte limit (at entry '%s')", x->src,
				     x->max_total, raw);
			goto cleanup;
		}
		x->total += (uint64_t)n;
		if (!write_all(fd, x->buf, (size_t)n)) {
			st = write_fail(x, raw, errno, err, errlen);
			goto cleanup;
		}
	}
	if (close(fd) != 0) {
		fd = -1;
		st = write_fail(x, raw, errno, err, errlen);
		goto cleanup;
	}
	fd = -1;
cleanup:
	if (fd >= 0)
		close(fd);
	if (dfd != x->rootfd)
		close(dfd);
	return st;
}

/* The extraction bound: limits, else $FATHOM_MAX_EXTRACT, else 4 GiB. */
static tracer_archive_status max_bytes(const tracer_trace_limits *lim,
				       uint64_t *out, char *err, size_t errlen)
{
	const char *env = getenv(TRACER_TRACE_MAX_ENV);
	const char *p = env;
	uint64_t v = 0;
	unsigned shift = 0;

	*out = TRACER_TRACE_DEFAULT_MAX_BYTES;
	if (lim && lim->max_total_bytes) {
		*out = lim->max_total_bytes;
		return TRACER_ARCHIVE_OK;
	}
	if (!env)
		return TRACER_ARCHIVE_OK;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == env)
		goto bad;
	switch (*p) {
	case 'K': shift = 10, p++; break;
	case 'M': shift = 20, p++; break;
	case 'G': shift = 30, p++; break;
	default: break;
	}
	if (*p || v == 0 || v > (UINT64_MAX >> shift))
		goto bad;
	*out = v << shift;
	return TRACER_ARCHIVE_OK;
bad:
	return set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
		       "%s='%.40s': want a positive number of bytes "
		       "(optionally with K, M or G)", TRACER_TRACE_MAX_ENV,
		       env);
}

/* A reader of t->source with every filter and the tar formats. */
static tracer_archive_status open_reader(const tracer_trace *t,
					 struct archive **out, char *err,
					 size_t errlen)
{
	struct archive *a = archive_read_new();
	tracer_archive_status st;

	*out = NULL;
	if (!a)
		return set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			       "%s: out of memory", t->source);
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, t->source, COPY_BUF_SIZE) !=
	    ARCHIVE_OK) {
		st = read_fail(a, t->source, err, errlen);
		archive_read_free(a);
		return st;
	}
	*out = a;
	return TRACER_ARCHIVE_OK;
}

/*
 * The first pass: walk the headers without writing anything, summing the
 * sizes they declare, and refuse the archive if the sum passes the bound or
 * the free space of tmpbase.  A compressed stream is still decompressed to
 * reach each header, but nothing is kept; the walk stops at the first
 * header that passes a bound.
 */
static tracer_archive_status prescan(const tracer_trace *t,
				     const char *tmpbase, uint64_t max_total,
				     uint64_t max_entries, char *err,
				     size_t errlen)
{
	tracer_archive_status st;
	struct archive *a = NULL;
	struct archive_entry *e;
	struct statvfs vfs;
	uint64_t sum = 0, nent = 0, avail = UINT64_MAX;

	if (statvfs(tmpbase, &vfs) == 0 && vfs.f_frsize > 0)
		avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	st = open_reader(t, &a, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		return st;
	for (;;) {
		int r = archive_read_next_header(a, &e);
		int64_t size;

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			st = read_fail(a, t->source, err, errlen);
			goto end;
		}
		if (++nent > max_entries) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
				     "%s: more than %" PRIu64 " entries",
				     t->source, max_entries);
			goto end;
		}
		size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
		if (size > 0 && archive_entry_filetype(e) == AE_IFREG)
			sum += (uint64_t)size < UINT64_MAX - sum
				       ? (uint64_t)size
				       : UINT64_MAX - sum;
		if (sum > max_total) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
				     "%s: its entries declare more than %" PRIu64
				     " bytes, past the %" PRIu64 "-byte limit "
				     "(refused before extracting; %s raises "
				     "it)", t->source, sum, max_total,
				     TRACER_TRACE_MAX_ENV);
			goto end;
		}
		if (sum > avail) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOSPC,
				     "%s: no space left on device: its entries "
				     "declare more than %" PRIu64 " bytes and "
				     "%s has %" PRIu64 " free (refused before "
				     "extracting; set TMPDIR)", t->source, sum,
				     tmpbase, avail);
			goto end;
		}
		if (archive_read_data_skip(a) < ARCHIVE_WARN) {
			st = read_fail(a, t->source, err, errlen);
			goto end;
		}
	}
	if (nent == 0)
		st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			     "%s: empty archive", t->source);
end:
	archive_read_free(a);
	return st;
}

static tracer_archive_status open_archive(tracer_trace *t,
					  const tracer_trace_limits *lim,
					  char *err, size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	extract_state x = { .rootfd = -1, .src = t->source };
	struct archive_entry *e;
	const char *tmpbase = getenv("TMPDIR");
	uint64_t max_entries = TRACER_TRACE_DEFAULT_MAX_ENTRIES, nent = 0;
	tracer_cleanup_mask mask;
	char name[sizeof(EXTRACT_PREFIX) + 32];
	int mfd = -1, mkerr = 0;

	if (lim && lim->max_entries)
		max_entries = lim->max_entries;
	if (!tmpbase || !*tmpbase)
		tmpbase = "/tmp";
	x.tmpbase = tmpbase;
	st = max_bytes(lim, &x.max_total, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	/* trees left by SIGKILLed readers */
	tracer_cleanup_stale(tmpbase, EXTRACT_PREFIX);
	st = prescan(t, tmpbase, x.max_total, max_entries, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	snprintf(name, sizeof name, EXTRACT_PREFIX "%ld-XXXXXX",
		 (long)getpid());
	t->tmpdir = path_join(tmpbase, name);
	x.buf = malloc(COPY_BUF_SIZE);
	if (!t->tmpdir || !x.buf) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", t->source);
		goto cleanup;
	}
	tracer_cleanup_block(&mask);
	if (mkdtemp(t->tmpdir))
		t->tmpslot = tracer_cleanup_add(t->tmpdir, true);
	else
		mkerr = errno;
	tracer_cleanup_unblock(&mask);
	if (mkerr) {
		st = set_err(err, errlen,
			     mkerr == ENOSPC ? TRACER_ARCHIVE_ENOSPC
					     : TRACER_ARCHIVE_EIO,
			     "%s: cannot create a temporary directory: %s",
			     t->tmpdir,
			     mkerr == ENOSPC ? "no space left on device"
					     : strerror(mkerr));
		free(t->tmpdir);
		t->tmpdir = NULL;
		goto cleanup;
	}
	t->root = str_dup(t->tmpdir);
	x.rootfd = open(t->tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!t->root || x.rootfd < 0) {
		st = set_err(err, errlen, errno_status(errno), "%s: %s",
			     t->tmpdir, strerror(errno));
		goto cleanup;
	}
	st = open_reader(t, &x.a, err, errlen);
	if (st != TRACER_ARCHIVE_OK)
		goto cleanup;
	for (;;) {
		int r = archive_read_next_header(x.a, &e);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			st = read_fail(x.a, t->source, err, errlen);
			goto cleanup;
		}
		if (++nent > max_entries) {
			st = set_err(err, errlen, TRACER_ARCHIVE_ELIMIT,
				     "%s: more than %" PRIu64 " entries",
				     t->source, max_entries);
			goto cleanup;
		}
		st = extract_entry(&x, e, err, errlen);
		if (st != TRACER_ARCHIVE_OK)
			goto cleanup;
	}
	if (nent == 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			     "%s: empty archive", t->source);
		goto cleanup;
	}
	mfd = openat(x.rootfd, TRACER_MANIFEST_FILE,
		     O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (mfd >= 0) {
		char shown[PATH_MAX];

		snprintf(shown, sizeof(shown), "%s:%s", t->source,
			 TRACER_MANIFEST_FILE);
		st = manifest_read_fd(mfd, shown, &t->manifest, err, errlen);
		if (st != TRACER_ARCHIVE_OK)
			goto cleanup;
	}
	st = finish_ctf(t, err, errlen);
cleanup:
	if (mfd >= 0)
		close(mfd);
	if (x.a)
		archive_read_free(x.a);
	if (x.rootfd >= 0)
		close(x.rootfd);
	free(x.buf);
	return st;
}

static bool is_live_url(const char *s)
{
	return strncmp(s, "net://", 6) == 0 || strncmp(s, "net4://", 7) == 0 ||
	       strncmp(s, "net6://", 7) == 0;
}

tracer_archive_status tracer_trace_open_ex(const char *path_or_url,
					   const tracer_trace_limits *limits,
					   tracer_trace **out, char *err,
					   size_t errlen)
{
	tracer_archive_status st = TRACER_ARCHIVE_OK;
	tracer_trace *t = NULL;
	struct stat sb;

	if (out)
		*out = NULL;
	if (!path_or_url || !*path_or_url || !out) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "trace open: no path given");
		goto cleanup;
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->tmpslot = -1;
	if (!t || !(t->source = str_dup(path_or_url))) {
		st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
			     "%s: out of memory", path_or_url);
		goto cleanup;
	}
	if (is_live_url(path_or_url)) {
		t->kind = TRACER_TRACE_LIVE;
		t->root = str_dup(path_or_url);
		if (!t->root)
			st = set_err(err, errlen, TRACER_ARCHIVE_ENOMEM,
				     "%s: out of memory", path_or_url);
		goto cleanup;
	}
	if (stat(path_or_url, &sb) != 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EIO, "%s: %s",
			     path_or_url, strerror(errno));
		goto cleanup;
	}
	if (S_ISDIR(sb.st_mode)) {
		t->kind = TRACER_TRACE_DIR;
		st = open_dir(t, err, errlen);
		goto cleanup;
	}
	t->kind = TRACER_TRACE_ARCHIVE;
	if (!S_ISREG(sb.st_mode)) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EINVAL,
			     "%s: not a regular file or directory",
			     path_or_url);
		goto cleanup;
	}
	if (sb.st_size == 0) {
		st = set_err(err, errlen, TRACER_ARCHIVE_EFORMAT,
			     "%s: empty file (not a trace archive)",
			     path_or_url);
		goto cleanup;
	}
	st = open_archive(t, limits, err, errlen);
cleanup:
	if (st == TRACER_ARCHIVE_OK) {
		*out = t;
		t = NULL;
	}
	tracer_trace_close(t); /* removes the temporary directory on error */
	return st;
}

tracer_archive_status tracer_trace_open(const char *path_or_url,
					tracer_trace **out, char *err,
					size_t errlen)
{
	return tracer_trace_open_ex(path_or_url, NULL, out, err, errlen);
}
