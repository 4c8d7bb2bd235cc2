/* A linear pass over one JSON text on yajl's callback parser.  */
#include <config.h>

#include "lib/json.h"

#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

/* Where the pass is.  */
struct json_state
{
  yajl_handle yajl;
  const char *text;
  size_t len;
  size_t depth;      /* containers open */
  bool top_object;   /* the text is an object */
  bool want_id;      /* the top-level "id" key was just read */
  bool id_seen;      /* the first one was, so later ones do not count */
  size_t id_key_end; /* offset just past that key */
  struct json_scan *out;
};

/* The top-level id is the value just read (ending at the offset yajl has
 * reached): its text runs from past the key's ':' to there.  */
static void
json_take_id (struct json_state *st, bool scalar)
{
  size_t end = yajl_get_bytes_consumed (st->yajl);
  size_t i = st->id_key_end;
  while (i < end && strchr (" \t\r\n:", st->text[i]) != NULL)
    i++;
  st->want_id = false;
  st->out->id_scalar = scalar;
  if (!scalar)
    return;
  st->out->id = st->text + i;
  st->out->id_len = end > i ? end - i : 0;
}

/* A scalar value was read; scalar values that are strings pass text.  */
static int
json_on_scalar (struct json_state *st, const unsigned char *s, size_t n)
{
  bool nul = s != NULL && memchr (s, '\0', n) != NULL;
  if (st->want_id && st->depth == 1)
    {
      json_take_id (st, true);
      st->out->id_nul = nul;
    }
  else if (nul)
    st->out->nul = true;
  return 1;
}

/* yajl: null.  */
static int
json_on_null (void *ctx)
{
  return json_on_scalar (ctx, NULL, 0);
}

/* yajl: true or false.  */
static int
json_on_boolean (void *ctx, int v)
{
  return json_on_scalar (ctx, NULL, 0);
}

/* yajl: a number.  */
static int
json_on_number (void *ctx, const char *s, size_t n)
{
  return json_on_scalar (ctx, NULL, 0);
}

/* yajl: a string, with its length.  */
static int
json_on_string (void *ctx, const unsigned char *s, size_t n)
{
  return json_on_scalar (ctx, s, n);
}

/* yajl: an object or array opens.  */
static int
json_on_open (struct json_state *st, bool object)
{
  if (st->want_id && st->depth == 1)
    json_take_id (st, false);
  if (st->depth++ == 0)
    st->top_object = object;
  return 1;
}

/* yajl: an object opens.  */
static int
json_on_start_map (void *ctx)
{
  return json_on_open (ctx, true);
}

/* yajl: an array opens.  */
static int
json_on_start_array (void *ctx)
{
  return json_on_open (ctx, false);
}

/* yajl: a container closes.  */
static int
json_on_close (void *ctx)
{
  struct json_state *st = ctx;
  st->depth--;
  return 1;
}

/* yajl: a key, with its length.  */
static int
json_on_map_key (void *ctx, const unsigned char *s, size_t n)
{
  struct json_state *st = ctx;
  if (memchr (s, '\0', n) != NULL)
    st->out->nul = true;
  if (st->depth == 1 && st->top_object && !st->id_seen && n == 2
      && memcmp (s, "id", 2) == 0)
    {
      st->id_seen = true;
      st->want_id = true;
      st->id_key_end = yajl_get_bytes_consumed (st->yajl);
    }
  return 1;
}

static const yajl_callbacks json_callbacks = {
  .yajl_null = json_on_null,
  .yajl_boolean = json_on_boolean,
  .yajl_number = json_on_number,
  .yajl_string = json_on_string,
  .yajl_start_map = json_on_start_map,
  .yajl_map_key = json_on_map_key,
  .yajl_end_map = json_on_close,
  .yajl_start_array = json_on_start_array,
  .yajl_end_array = json_on_close,
};

int
json_scan (const char *text, size_t len, struct json_scan *out)
{
  struct json_state st = { .text = text, .len = len, .out = out };
  memset (out, 0, sizeof *out);
  /* One call over the whole text, so yajl's offsets are into it.  */
  st.yajl = yajl_alloc (&json_callbacks, NULL, &st);
  if (st.yajl == NULL)
    return -1;
  yajl_status s = yajl_parse (st.yajl, (const unsigned char *) text, len);
  if (s == yajl_status_ok)
    s = yajl_complete_parse (st.yajl);
  yajl_free (st.yajl);
  return s == yajl_status_ok ? 0 : -1;
}

yajl_val
json_tree (const char *text, size_t len, char *why, size_t why_len)
{
  if (memchr (text, '\0', len) != NULL)
    {
      snprintf (why, why_len, "a NUL byte inside the JSON text");
      return NULL;
    }
  yajl_val v = yajl_tree_parse (text, why, why_len);
  if (v == NULL && why_len > 0)
    {
      /* yajl's message spans lines, with a caret under the place.  */
      char *nl = strchr (why, '\n');
      if (nl != NULL)
        *nl = '\0';
    }
  return v;
}

yajl_val
json_member (yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

const char *
json_member_str (yajl_val obj, const char *key)
{
  yajl_val v = json_member (obj, key);
  return v != NULL && YAJL_IS_STRING (v) ? v->u.string : NULL;
}

bool
json_member_bool (yajl_val obj, const char *key, bool dflt)
{
  yajl_val v = json_member (obj, key);
  if (v != NULL && YAJL_IS_TRUE (v))
    return true;
  if (v != NULL && YAJL_IS_FALSE (v))
    return false;
  return dflt;
}

long long
json_member_int (yajl_val obj, const char *key, long long dflt)
{
  yajl_val v = json_member (obj, key);
  return v != NULL && YAJL_IS_INTEGER (v) ? v->u.number.i : dflt;
}
