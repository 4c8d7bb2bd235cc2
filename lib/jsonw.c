/* The one JSON writer, over yajl_gen.  */
#include <config.h>

#include "lib/jsonw.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

struct jsonw
{
  yajl_gen gen;
  struct buf out;
};

/* yajl_gen's output: into the buffer.  yajl writes the escape of a control
 * byte as one piece "\u00XX" in upper case; it is written in lower case,
 * the spelling crucible has always sent (doc/strings.md).  A piece of
 * plain string text never starts with a backslash, since yajl escapes
 * every backslash as a piece of its own ("\\", two bytes).  */
static void
jsonw_print (void *ctx, const char *s, size_t len)
{
  struct buf *out = ctx;
  if (len == 6 && s[0] == '\\' && s[1] == 'u')
    {
      char esc[6];
      memcpy (esc, s, 6);
      for (int i = 4; i < 6; i++)
        if (esc[i] >= 'A' && esc[i] <= 'F')
          esc[i] = (char) (esc[i] - 'A' + 'a');
      buf_append (out, esc, 6);
      return;
    }
  buf_append (out, s, len);
}

struct jsonw *
jsonw_new (void)
{
  struct jsonw *w = xcalloc (1, sizeof *w);
  w->gen = yajl_gen_alloc (NULL);
  if (w->gen == NULL)
    abort (); /* out of memory, as xalloc treats it */
  yajl_gen_config (w->gen, yajl_gen_print_callback, jsonw_print, &w->out);
  return w;
}

struct jsonw *
jsonw_new_pretty (void)
{
  struct jsonw *w = jsonw_new ();
  yajl_gen_config (w->gen, yajl_gen_beautify, 1);
  yajl_gen_config (w->gen, yajl_gen_indent_string, "  ");
  return w;
}

void
jsonw_free (struct jsonw *w)
{
  if (w == NULL)
    return;
  yajl_gen_free (w->gen);
  buf_free (&w->out);
  free (w);
}

const char *
jsonw_get (const struct jsonw *w, size_t *len)
{
  if (len != NULL)
    *len = w->out.len;
  return w->out.data != NULL ? w->out.data : "";
}

char *
jsonw_steal (struct jsonw *w, size_t *len)
{
  buf_append (&w->out, "", 0);
  char *s = buf_steal (&w->out, len);
  jsonw_free (w);
  return s;
}

void
jsonw_object_open (struct jsonw *w)
{
  yajl_gen_map_open (w->gen);
}

void
jsonw_object_close (struct jsonw *w)
{
  yajl_gen_map_close (w->gen);
}

void
jsonw_array_open (struct jsonw *w)
{
  yajl_gen_array_open (w->gen);
}

void
jsonw_array_close (struct jsonw *w)
{
  yajl_gen_array_close (w->gen);
}

void
jsonw_key (struct jsonw *w, const char *key)
{
  jsonw_string (w, key, strlen (key));
}

void
jsonw_string (struct jsonw *w, const char *s, size_t len)
{
  yajl_gen_string (w->gen, (const unsigned char *) (s != NULL ? s : ""), len);
}

void
jsonw_cstr (struct jsonw *w, const char *s)
{
  if (s == NULL)
    jsonw_null (w);
  else
    jsonw_string (w, s, strlen (s));
}

void
jsonw_text (struct jsonw *w, const char *s, size_t len)
{
  struct buf clean = BUF_INIT;
  utf8_sanitize (&clean, s, len);
  jsonw_string (w, clean.data, clean.len);
  buf_free (&clean);
}

void
jsonw_int (struct jsonw *w, int64_t v)
{
  char num[32];
  int n = snprintf (num, sizeof num, "%" PRId64, v);
  yajl_gen_number (w->gen, num, (size_t) n);
}

void
jsonw_uint (struct jsonw *w, uint64_t v)
{
  char num[32];
  int n = snprintf (num, sizeof num, "%" PRIu64, v);
  yajl_gen_number (w->gen, num, (size_t) n);
}

void
jsonw_bool (struct jsonw *w, bool v)
{
  yajl_gen_bool (w->gen, v);
}

void
jsonw_null (struct jsonw *w)
{
  yajl_gen_null (w->gen);
}

void
jsonw_member_cstr (struct jsonw *w, const char *key, const char *s)
{
  jsonw_key (w, key);
  jsonw_cstr (w, s);
}

void
jsonw_member_uint (struct jsonw *w, const char *key, uint64_t v)
{
  jsonw_key (w, key);
  jsonw_uint (w, v);
}

void
jsonw_member_bool (struct jsonw *w, const char *key, bool v)
{
  jsonw_key (w, key);
  jsonw_bool (w, v);
}

void
jsonw_raw (struct jsonw *w, const char *json, size_t len)
{
  /* yajl_gen_number writes its text as it is, with the separators and
   * state of any value: the one way yajl has to place JSON text.  */
  yajl_gen_number (w->gen, json, len);
}

/* Append what the writer writes for the lone string s: made valid UTF-8
 * or as it is (text), with or without its quotes.  */
static void
json_lone_string (struct buf *out, const char *s, size_t len, bool text,
                  bool quotes)
{
  struct jsonw *w = jsonw_new ();
  size_t n;
  if (text)
    jsonw_text (w, s, len);
  else
    jsonw_string (w, s, len);
  const char *written = jsonw_get (w, &n);
  if (quotes)
    buf_append (out, written, n);
  else
    buf_append (out, written + 1, n - 2);
  jsonw_free (w);
}

void
json_string_escape (struct buf *out, const char *s, size_t len)
{
  json_lone_string (out, s, len, false, false);
}

void
json_text_append (struct buf *out, const char *s, size_t len)
{
  json_lone_string (out, s, len, true, true);
}

/* What the writer writes for each byte below 0x80 inside a string.  */
static unsigned char json_cost[0x80];
static pthread_once_t json_cost_once = PTHREAD_ONCE_INIT;

/* Measure json_cost on the writer: an array of the one-byte strings, each
 * costing what its element adds less its quotes and the comma before it
 * (one writer, not one per byte: this runs in every process that sizes a
 * string, and a writer each was a tenth of crucible run's instructions).  */
static void
json_cost_measure (void)
{
  struct jsonw *w = jsonw_new ();
  size_t before, after;
  jsonw_array_open (w);
  jsonw_get (w, &before);
  for (unsigned c = 0; c < 0x80; c++)
    {
      char byte = (char) c;
      jsonw_string (w, &byte, 1);
      jsonw_get (w, &after);
      json_cost[c] = (unsigned char) (after - before - 2 - (c > 0 ? 1 : 0));
      before = after;
    }
  jsonw_free (w);
}

size_t
json_byte_size (unsigned char c)
{
  if (c >= 0x80)
    return 1; /* bytes of UTF-8 are written as they are */
  pthread_once (&json_cost_once, json_cost_measure);
  return json_cost[c];
}

size_t
json_string_size (const char *s, size_t len)
{
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += json_byte_size ((unsigned char) s[i]);
  return n;
}

/* One string of a walked value: through the hook, or as it is.  */
static void
jsonw_value_string (struct jsonw *w, bool key, const char *s,
                    jsonw_string_hook hook, void *data)
{
  if (hook != NULL)
    hook (data, w, key, s, strlen (s));
  else
    jsonw_string (w, s, strlen (s));
}

void
jsonw_value_hooked (struct jsonw *w, const struct yajl_val_s *v,
                    jsonw_string_hook hook, void *data)
{
  if (YAJL_IS_STRING (v))
    jsonw_value_string (w, false, v->u.string, hook, data);
  else if (YAJL_IS_NUMBER (v))
    jsonw_raw (w, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    jsonw_bool (w, YAJL_IS_TRUE (v));
  else if (YAJL_IS_OBJECT (v))
    {
      jsonw_object_open (w);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          jsonw_value_string (w, true, v->u.object.keys[i], hook, data);
          jsonw_value_hooked (w, v->u.object.values[i], hook, data);
        }
      jsonw_object_close (w);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      jsonw_array_open (w);
      for (size_t i = 0; i < v->u.array.len; i++)
        jsonw_value_hooked (w, v->u.array.values[i], hook, data);
      jsonw_array_close (w);
    }
  else
    jsonw_null (w);
}

void
jsonw_value (struct jsonw *w, const struct yajl_val_s *v)
{
  jsonw_value_hooked (w, v, NULL, NULL);
}
