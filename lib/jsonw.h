/* The one JSON writer: yajl_gen, compact, writing into a buffer, with
 * control bytes escaped as \u00xx in lower case.  Every JSON text crucible
 * writes (tool results, the journal, inspection, the agent protocol,
 * JSON-RPC) goes through it, and so does the count of encoded bytes that
 * bounds a tool result (json_string_size), so the cap and the bytes sent
 * cannot disagree.  Strings are written as given: a caller whose text may
 * not be valid UTF-8 uses jsonw_text.  */
#ifndef CRUCIBLE_LIB_JSONW_H
#define CRUCIBLE_LIB_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;
struct jsonw;

/* A writer for one JSON text.  */
struct jsonw *jsonw_new (void);

/* A writer laid out for people (a file they edit): two-space indents, one
 * member a line, a newline at the end.  */
struct jsonw *jsonw_new_pretty (void);

/* Free a writer; NULL is allowed.  */
void jsonw_free (struct jsonw *w);

/* The text written so far, and its length; owned by the writer.  */
const char *jsonw_get (const struct jsonw *w, size_t *len);

/* The text written, taken from the writer, which is freed.  */
char *jsonw_steal (struct jsonw *w, size_t *len);

void jsonw_object_open (struct jsonw *w);
void jsonw_object_close (struct jsonw *w);
void jsonw_array_open (struct jsonw *w);
void jsonw_array_close (struct jsonw *w);

/* A key of the object being written (a NUL-terminated string).  */
void jsonw_key (struct jsonw *w, const char *key);

/* A string of len bytes, written as they are.  */
void jsonw_string (struct jsonw *w, const char *s, size_t len);

/* A NUL-terminated string, or null when s is NULL.  */
void jsonw_cstr (struct jsonw *w, const char *s);

/* A string of len bytes as valid UTF-8, each invalid byte written as
 * U+FFFD: what crucible sends is, whatever a peer or a file put in it.  */
void jsonw_text (struct jsonw *w, const char *s, size_t len);

void jsonw_int (struct jsonw *w, int64_t v);
void jsonw_uint (struct jsonw *w, uint64_t v);
void jsonw_bool (struct jsonw *w, bool v);
void jsonw_null (struct jsonw *w);

/* A member of the object being written: "key": and a string (null when s
 * is NULL), a count or true/false.  */
void jsonw_member_cstr (struct jsonw *w, const char *key, const char *s);
void jsonw_member_uint (struct jsonw *w, const char *key, uint64_t v);
void jsonw_member_bool (struct jsonw *w, const char *key, bool v);

/* A value that is already JSON text (a number as formatted, a request id
 * as the peer spelled it, a fixed object), written as it is.  */
void jsonw_raw (struct jsonw *w, const char *json, size_t len);

/* Append what the writer writes for s (len bytes) inside a string, quotes
 * excluded.  */
void json_string_escape (struct buf *out, const char *s, size_t len);

/* Append what the writer writes for s (len bytes, made valid UTF-8) as a
 * string, quotes included.  */
void json_text_append (struct buf *out, const char *s, size_t len);

/* Bytes the writer writes for s inside a string, quotes excluded: '"' '\\'
 * and \b \f \n \r \t cost 2, other bytes below 0x20 cost 6 (\u00xx),
 * everything else 1.  The costs are measured on the writer itself.  */
size_t json_string_size (const char *s, size_t len);

/* The cost json_string_size counts for one byte.  */
size_t json_byte_size (unsigned char c);

/* Write a value read with yajl's tree parser back as JSON (a call's
 * arguments handed on): numbers as they were spelled.  */
struct yajl_val_s;
void jsonw_value (struct jsonw *w, const struct yajl_val_s *v);

/* What writes each string of a value jsonw_value_hooked walks, keys
 * included (key says which); it writes the string (len bytes) to w itself,
 * as it is or changed (credential values hidden, say).  */
typedef void (*jsonw_string_hook) (void *data, struct jsonw *w, bool key,
                                   const char *s, size_t len);

/* jsonw_value with each string, keys included, written by hook (given
 * data); a NULL hook writes them as they are, as jsonw_value does.  */
void jsonw_value_hooked (struct jsonw *w, const struct yajl_val_s *v,
                         jsonw_string_hook hook, void *data);

#endif
