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

#endif
