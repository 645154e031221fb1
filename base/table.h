/* table.h -- the one hash table: keys to entries the caller defines.
 *
 * Each entry is a struct of the caller's whose first bytes are its key. The
 * key is either a fixed number of bytes (an id, a pointer, or a struct of
 * several ids with no padding), or a run of bytes kept by the caller
 * (base_table_bytes: a word, a name). The table stores the entries
 * themselves, in slots of open addressing: linear probing, at most half
 * full, doubling through base/alloc.h (the fault injection of the tests
 * reaches it), backward-shift removal (no tombstones). Byte strings are
 * hashed with FNV-1a (base/hash.h), keys of fixed size a word at a time;
 * each slot keeps its hash, and lookups compare the hash before the key.
 *
 *     typedef struct { uint32_t id; uint32_t role; uint64_t bytes; } tensor;
 *     base_table t = BASE_TABLE(tensor, sizeof(uint32_t));
 *     tensor *e;
 *     if (base_table_put(&t, &id, (void **)&e) == BASE_TABLE_NOMEM)
 *         return ...;
 *     e->bytes += n;
 *
 * An entry's address holds until the next put or del on the table. A
 * zero-filled table has no entry size: give it one with BASE_TABLE or
 * base_table_init first. Not thread-safe. */
#ifndef FATHOM_BASE_TABLE_H
#define FATHOM_BASE_TABLE_H
#include <stddef.h>
#include <stdint.h>

/* A key of bytes the caller keeps (key_size 0): n bytes at p. */
typedef struct base_table_bytes {
    const void *p;
    size_t n;
} base_table_bytes;

typedef struct base_table {
    unsigned char *slots; /* cap slots: the key's hash (0: empty), then the entry */
    size_t cap, len;      /* slots (0 or a power of two), entries */
    size_t size, stride;  /* bytes of an entry; of a slot */
    size_t key_size;      /* bytes of the key at the entry's start; 0: a base_table_bytes */
} base_table;

/* An empty table of entries of `type` keyed by their first key_bytes bytes
 * (0: a base_table_bytes). */
#define BASE_TABLE(type, key_bytes) \
    ((base_table){ .size = sizeof(type), .stride = 8 + (sizeof(type) + 7) / 8 * 8, .key_size = (key_bytes) })

void base_table_init(base_table *t, size_t entry_size, size_t key_size);

typedef enum base_table_status {
    BASE_TABLE_OK = 0,     /* done */
    BASE_TABLE_FOUND = 0,  /* the key was there: its entry */
    BASE_TABLE_ADDED = 1,  /* a new entry: its key copied in, its other bytes 0 */
    BASE_TABLE_NOMEM = -1, /* out of memory (the thread's message says so); the table as it was */
} base_table_status;

/* The entry of key (the key_size bytes at key, or a base_table_bytes), or
 * NULL. */
void *base_table_get(const base_table *t, const void *key);
/* The entry of key into *entry: the one there (FOUND), or a new one (ADDED).
 * A byte key's pointer is copied, not its bytes: they must outlive the
 * entry (the caller may point the entry's key at its own copy). */
base_table_status base_table_put(base_table *t, const void *key, void **entry);
/* Removes the entry (an address from get or put). */
void base_table_del(base_table *t, void *entry);
/* Room for n entries in all without another allocation: a put of a key not
 * there then fails only past n. BASE_TABLE_OK, or BASE_TABLE_NOMEM. */
base_table_status base_table_reserve(base_table *t, size_t n);
/* The entries in slot order (an order of no meaning): *pos 0 first, then
 * NULL after the last. A del during the walk may skip or repeat an entry. */
void *base_table_next(const base_table *t, size_t *pos);
/* *dst as a copy of src (dst's own memory is not freed first).
 * BASE_TABLE_OK, or BASE_TABLE_NOMEM with *dst empty. */
base_table_status base_table_copy(base_table *dst, const base_table *src);
/* The hash of key, never 0; the low bits of it are the key's first slot
 * (for the tests of collisions). */
uint64_t base_table_hash(const base_table *t, const void *key);
/* Frees the slots; the table is empty and may be used again. */
void base_table_free(base_table *t);
#endif
