/* A linear pass over one JSON text for what yajl's tree loses: the length
 * of each string (a "\u0000" inside one ends it in the tree) and the text
 * of the top-level "id" exactly as the peer spelled it.  */
#ifndef CRUCIBLE_LIB_JSON_H
#define CRUCIBLE_LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct json_scan
{
  bool nul;       /* a key or string other than the top-level id holds NUL */
  bool id_nul;    /* the top-level id is a string holding NUL */
  const char *id; /* the top-level id's text in the input, or NULL */
  size_t id_len;
  bool id_scalar; /* the id is a string, a number or null */
};

/* Scan text[0..len) (a whole JSON text); returns -1 when it is not JSON.
 * Only the first "id" key of a top-level object counts.  */
int json_scan (const char *text, size_t len, struct json_scan *out);

/* A JSON text from a peer (an engine's answer) as a yajl tree: len bytes,
 * NUL-terminated at text[len]; NULL with why when it is not JSON or holds a
 * NUL byte (which would end yajl's reading early).  Free with
 * yajl_tree_free.  */
struct yajl_val_s;
struct yajl_val_s *json_tree (const char *text, size_t len, char *why,
                              size_t why_len);

/* Members of an object read from such a tree (obj may be NULL or not an
 * object): the string (NULL when absent or not a string), the boolean
 * (dflt when absent or not one), the integer (dflt likewise).  */
const char *json_member_str (struct yajl_val_s *obj, const char *key);
bool json_member_bool (struct yajl_val_s *obj, const char *key, bool dflt);
long long json_member_int (struct yajl_val_s *obj, const char *key,
                           long long dflt);

/* The member key of obj (any type), or NULL.  */
struct yajl_val_s *json_member (struct yajl_val_s *obj, const char *key);

#endif
