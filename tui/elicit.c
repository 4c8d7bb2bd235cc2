/* The panel of an MCP server's own question, and the form it fills in.  */
#include <config.h>

#include "tui/elicit.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/json.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "tui/screen.h"

/* Bounds on what a server's schema may put in the panel: past them it is
 * declined as one the panel cannot fill in, never drawn partly.  */
#define ELICIT_FIELDS_MAX 32
#define ELICIT_VALUES_MAX 64
#define ELICIT_TEXT_MAX 4096 /* bytes a person may type into one field */

/* A field's kind: MCP 2025-06-18's primitive schemas.  */
enum elicit_kind
{
  ELICIT_STRING,
  ELICIT_NUMBER,
  ELICIT_INTEGER,
  ELICIT_BOOLEAN,
  ELICIT_ENUM,
};

/* One property of the requested schema, and what the person put in it.  */
struct elicit_field
{
  char *name;        /* the property's key, sent back as is */
  char *title;       /* its title (or name), shown safe */
  char *description; /* shown safe, or NULL */
  enum elicit_kind kind;
  bool required;
  char *format;          /* a string's: email, uri, date, date-time, or NULL */
  long long min_len;     /* a string's minLength, or -1 */
  long long max_len;     /* its maxLength, or -1 */
  bool has_min, has_max; /* a number's minimum and maximum */
  double min, max;
  char **values, **labels; /* an enum's values and their names, shown safe */
  size_t n_values;
  struct buf text; /* what the person typed (string, number, integer) */
  bool on;         /* a boolean's value */
  int pick;        /* an enum's chosen index, -1 for none */
  bool touched;    /* edited: its refusal is shown as it is typed */
};

/* The question's state.  */
struct elicit
{
  const struct panel_host *host;
  struct elicit_host ask;
  struct elicit_field *fields;
  int n_fields;
  bool can_accept; /* the schema could be put in fields */
  bool tried;      /* Accept was chosen once: every refusal is shown */
  int sel;         /* a row: the fields, then the choices */
};

/* --- the schema -------------------------------------------------------- */

/* A string member of obj shown safe (a fresh string), or NULL.  */
static char *
elicit_member_shown (yajl_val obj, const char *key)
{
  const char *s = json_member_str (obj, key);
  return s != NULL ? utf8_show_dup (s, 0) : NULL;
}

/* A number member of obj into *out; whether it is one.  */
static bool
elicit_member_number (yajl_val obj, const char *key, double *out)
{
  yajl_val v = json_member (obj, key);
  if (v == NULL || !YAJL_IS_NUMBER (v))
    return false;
  *out = YAJL_IS_INTEGER (v) ? (double) YAJL_GET_INTEGER (v)
                             : YAJL_GET_DOUBLE (v);
  return true;
}

/* A number as the panel shows it and the reply carries it.  */
static void
elicit_number_text (struct buf *out, double v)
{
  buf_printf (out, "%.15g", v);
}

/* An enum's values (strings only) and their enumNames; false when it has
 * none, one that is not a string, or too many.  */
static bool
elicit_parse_enum (struct elicit_field *f, yajl_val prop, yajl_val values)
{
  yajl_val names = json_member (prop, "enumNames");
  size_t n = values->u.array.len;
  if (n == 0 || n > ELICIT_VALUES_MAX)
    return false;
  f->kind = ELICIT_ENUM;
  f->values = xcalloc (n, sizeof *f->values);
  f->labels = xcalloc (n, sizeof *f->labels);
  f->n_values = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val v = values->u.array.values[i];
      if (!YAJL_IS_STRING (v))
        return false;
      f->values[i] = xstrdup (YAJL_GET_STRING (v));
      yajl_val name
          = names != NULL && YAJL_IS_ARRAY (names) && i < names->u.array.len
                ? names->u.array.values[i]
                : NULL;
      f->labels[i] = utf8_show_dup (name != NULL && YAJL_IS_STRING (name)
                                        ? YAJL_GET_STRING (name)
                                        : f->values[i],
                                    0);
    }
  const char *dflt = json_member_str (prop, "default");
  for (size_t i = 0; dflt != NULL && i < n; i++)
    if (strcmp (f->values[i], dflt) == 0)
      f->pick = (int) i;
  return true;
}

/* One property into f; false when it is not a primitive the panel can
 * fill in (an object, an array, no type).  */
static bool
elicit_parse_field (struct elicit_field *f, const char *name, yajl_val prop)
{
  f->name = xstrdup (name);
  f->pick = -1;
  f->min_len = f->max_len = -1;
  if (!YAJL_IS_OBJECT (prop))
    return false;
  f->title = elicit_member_shown (prop, "title");
  if (f->title == NULL)
    f->title = utf8_show_dup (name, 0);
  f->description = elicit_member_shown (prop, "description");
  const char *type = json_member_str (prop, "type");
  yajl_val values = json_member (prop, "enum");
  if (type == NULL)
    return false;
  if (strcmp (type, "string") == 0 && values != NULL)
    return YAJL_IS_ARRAY (values) && elicit_parse_enum (f, prop, values);
  if (strcmp (type, "string") == 0)
    {
      f->kind = ELICIT_STRING;
      const char *format = json_member_str (prop, "format");
      if (format != NULL)
        f->format = xstrdup (format);
      f->min_len = json_member_int (prop, "minLength", -1);
      f->max_len = json_member_int (prop, "maxLength", -1);
      const char *dflt = json_member_str (prop, "default");
      if (dflt != NULL)
        buf_puts (&f->text, dflt);
      return true;
    }
  if (strcmp (type, "number") == 0 || strcmp (type, "integer") == 0)
    {
      double dflt;
      f->kind = type[0] == 'n' ? ELICIT_NUMBER : ELICIT_INTEGER;
      f->has_min = elicit_member_number (prop, "minimum", &f->min);
      f->has_max = elicit_member_number (prop, "maximum", &f->max);
      if (elicit_member_number (prop, "default", &dflt))
        elicit_number_text (&f->text, dflt);
      return true;
    }
  if (strcmp (type, "boolean") == 0)
    {
      f->kind = ELICIT_BOOLEAN;
      f->on = json_member_bool (prop, "default", false);
      return true;
    }
  return false;
}

/* Free the fields.  */
static void
elicit_fields_free (struct elicit *e)
{
  for (int i = 0; i < e->n_fields; i++)
    {
      struct elicit_field *f = &e->fields[i];
      free (f->name);
      free (f->title);
      free (f->description);
      free (f->format);
      for (size_t j = 0; j < f->n_values; j++)
        {
          free (f->values[j]);
          free (f->labels[j]);
        }
      free (f->values);
      free (f->labels);
      buf_free (&f->text);
    }
  free (e->fields);
  e->fields = NULL;
  e->n_fields = 0;
}

/* Whether every name in the schema's required array is a field, marking
 * them.  */
static bool
elicit_parse_required (struct elicit *e, yajl_val req)
{
  if (req == NULL)
    return true;
  if (!YAJL_IS_ARRAY (req))
    return false;
  for (size_t i = 0; i < req->u.array.len; i++)
    {
      yajl_val r = req->u.array.values[i];
      const char *want = YAJL_IS_STRING (r) ? r->u.string : NULL;
      bool found = false;
      for (int j = 0; want != NULL && j < e->n_fields; j++)
        if (strcmp (e->fields[j].name, want) == 0)
          found = e->fields[j].required = true;
      if (!found)
        return false;
    }
  return true;
}

/* The requested schema (JSON text) into fields; false, with none, when
 * the panel cannot fill it in: not a flat object of primitives.  */
static bool
elicit_parse (struct elicit *e, const char *schema)
{
  char why[128];
  yajl_val v = json_tree (schema, strlen (schema), why, sizeof why);
  bool good = v != NULL && YAJL_IS_OBJECT (v);
  const char *type = good ? json_member_str (v, "type") : NULL;
  yajl_val props = good ? json_member (v, "properties") : NULL;
  good = good && (type == NULL || strcmp (type, "object") == 0)
         && (props == NULL
             || (YAJL_IS_OBJECT (props)
                 && props->u.object.len <= ELICIT_FIELDS_MAX));
  if (good && props != NULL && props->u.object.len > 0)
    {
      e->fields = xcalloc (props->u.object.len, sizeof *e->fields);
      for (size_t i = 0; good && i < props->u.object.len; i++)
        {
          e->n_fields++;
          good = elicit_parse_field (&e->fields[i], props->u.object.keys[i],
                                     props->u.object.values[i]);
        }
    }
  good = good && elicit_parse_required (e, json_member (v, "required"));
  if (!good)
    elicit_fields_free (e);
  if (v != NULL)
    yajl_tree_free (v);
  return good;
}

/* --- a field's value --------------------------------------------------- */

/* The code points in s.  */
static long long
elicit_chars (const char *s, size_t len)
{
  long long n = 0;
  for (size_t i = 0; i < len; n++)
    {
      size_t l = utf8_char_len ((const unsigned char *) s + i, len - i);
      i += l > 0 ? l : 1;
    }
  return n;
}

/* Whether s is n digits at p.  */
static bool
elicit_digits (const char *p, int n)
{
  for (int i = 0; i < n; i++)
    if (!isdigit ((unsigned char) p[i]))
      return false;
  return true;
}

/* Whether s starts with a date (YYYY-MM-DD, RFC 3339's full-date).  */
static bool
elicit_is_date (const char *s)
{
  if (strlen (s) < 10 || !elicit_digits (s, 4) || s[4] != '-'
      || !elicit_digits (s + 5, 2) || s[7] != '-' || !elicit_digits (s + 8, 2))
    return false;
  long month = strtol (s + 5, NULL, 10), day = strtol (s + 8, NULL, 10);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/* Whether s is an RFC 3339 date-time (2026-12-02T01:30:00Z).  */
static bool
elicit_is_date_time (const char *s)
{
  if (!elicit_is_date (s) || (s[10] != 'T' && s[10] != 't'))
    return false;
  const char *t = s + 11;
  if (strlen (t) < 8 || !elicit_digits (t, 2) || t[2] != ':'
      || !elicit_digits (t + 3, 2) || t[5] != ':' || !elicit_digits (t + 6, 2))
    return false;
  t += 8;
  if (*t == '.' && isdigit ((unsigned char) t[1]))
    for (t++; isdigit ((unsigned char) *t); t++)
      ;
  if (*t == 'Z' || *t == 'z')
    return t[1] == '\0';
  return (*t == '+' || *t == '-') && strlen (t) == 6 && elicit_digits (t + 1, 2)
         && t[3] == ':' && elicit_digits (t + 4, 2);
}

/* Whether s is a URI: a scheme (a letter, then letters, digits, + - .),
 * a colon, and something after it, with no space.  */
static bool
elicit_is_uri (const char *s)
{
  const char *p = s;
  if (!isalpha ((unsigned char) *p))
    return false;
  while (isalnum ((unsigned char) *p) || *p == '+' || *p == '-' || *p == '.')
    p++;
  return *p == ':' && p[1] != '\0' && strpbrk (s, " \t") == NULL;
}

/* Whether s is an email address: one @ between a local part and a domain
 * with a dot in it, no space.  */
static bool
elicit_is_email (const char *s)
{
  const char *at = strchr (s, '@');
  return at != NULL && at != s && strchr (at + 1, '@') == NULL
         && strchr (at + 1, '.') != NULL && at[1] != '.'
         && s[strlen (s) - 1] != '.' && strpbrk (s, " \t") == NULL;
}

/* A number typed into f as *out; whether it is one of its kind.  */
static bool
elicit_parse_number (const struct elicit_field *f, double *out)
{
  const char *s = f->text.data;
  char *end;
  errno = 0;
  if (f->kind == ELICIT_INTEGER)
    {
      long long v = strtoll (s, &end, 10);
      *out = (double) v;
    }
  else
    *out = strtod (s, &end);
  /* Decimal only: strtod's hex, inf and nan are no JSON number.  */
  return errno == 0 && end != s && *end == '\0' && isfinite (*out)
         && strpbrk (s, "xXnNiI") == NULL && !isspace ((unsigned char) *s);
}

/* Why f's value is refused (written into why), or NULL when it is
 * accepted; an empty optional field is accepted (it is left out).  */
static const char *
elicit_refusal (const struct elicit_field *f, char *why, size_t n)
{
  bool empty = f->kind == ELICIT_ENUM      ? f->pick < 0
               : f->kind == ELICIT_BOOLEAN ? false
                                           : f->text.len == 0;
  if (empty)
    return f->required ? _ ("it is required") : NULL;
  if (f->kind == ELICIT_STRING)
    {
      const char *s = f->text.data;
      long long chars = elicit_chars (s, f->text.len);
      if (f->min_len >= 0 && chars < f->min_len)
        snprintf (why, n, _ ("it needs at least %lld characters"), f->min_len);
      else if (f->max_len >= 0 && chars > f->max_len)
        snprintf (why, n, _ ("it takes at most %lld characters"), f->max_len);
      else if (f->format != NULL && strcmp (f->format, "email") == 0
               && !elicit_is_email (s))
        snprintf (why, n, "%s", _ ("it is not an email address"));
      else if (f->format != NULL && strcmp (f->format, "uri") == 0
               && !elicit_is_uri (s))
        snprintf (why, n, "%s", _ ("it is not a URI"));
      else if (f->format != NULL && strcmp (f->format, "date") == 0
               && !(elicit_is_date (s) && s[10] == '\0'))
        snprintf (why, n, "%s", _ ("it is not a date (YYYY-MM-DD)"));
      else if (f->format != NULL && strcmp (f->format, "date-time") == 0
               && !elicit_is_date_time (s))
        snprintf (why, n, "%s",
                  _ ("it is not a date and time (YYYY-MM-DDTHH:MM:SSZ)"));
      else
        return NULL;
      return why;
    }
  if (f->kind == ELICIT_NUMBER || f->kind == ELICIT_INTEGER)
    {
      double v;
      struct buf bound = BUF_INIT;
      if (!elicit_parse_number (f, &v))
        snprintf (why, n, "%s",
                  f->kind == ELICIT_INTEGER ? _ ("it is not a whole number")
                                            : _ ("it is not a number"));
      else if (f->has_min && v < f->min)
        {
          elicit_number_text (&bound, f->min);
          snprintf (why, n, _ ("it is less than %s"), bound.data);
        }
      else if (f->has_max && v > f->max)
        {
          elicit_number_text (&bound, f->max);
          snprintf (why, n, _ ("it is more than %s"), bound.data);
        }
      else
        return NULL;
      buf_free (&bound);
      return why;
    }
  return NULL;
}

/* The first field whose value is refused, or -1.  */
static int
elicit_first_refused (const struct elicit *e)
{
  char why[160];
  for (int i = 0; e->fields != NULL && i < e->n_fields; i++)
    if (elicit_refusal (&e->fields[i], why, sizeof why) != NULL)
      return i;
  return -1;
}

/* The accepted answer's content: every field with a value, typed
 * (numbers as numbers); the caller frees it.  */
static char *
elicit_content (const struct elicit *e)
{
  struct jsonw *w = jsonw_new ();
  jsonw_object_open (w);
  for (int i = 0; e->fields != NULL && i < e->n_fields; i++)
    {
      const struct elicit_field *f = &e->fields[i];
      double v;
      if (f->kind == ELICIT_BOOLEAN)
        jsonw_member_bool (w, f->name, f->on);
      else if (f->kind == ELICIT_ENUM && f->pick >= 0)
        jsonw_member_cstr (w, f->name, f->values[f->pick]);
      else if (f->kind == ELICIT_STRING && f->text.len > 0)
        jsonw_member_cstr (w, f->name, f->text.data);
      else if (f->text.len > 0 && elicit_parse_number (f, &v))
        {
          struct buf num = BUF_INIT;
          if (f->kind == ELICIT_INTEGER)
            buf_printf (&num, "%lld", strtoll (f->text.data, NULL, 10));
          else
            elicit_number_text (&num, v);
          jsonw_key (w, f->name);
          jsonw_raw (w, num.data, num.len);
          buf_free (&num);
        }
    }
  jsonw_object_close (w);
  return jsonw_steal (w, NULL); /* which frees w */
}

/* --- drawing ----------------------------------------------------------- */

/* The choices shown for the question, in order; *n of them.  */
static const enum mcpclient_elicit_action *
elicit_choices (const struct elicit *e, int *n)
{
  static const enum mcpclient_elicit_action all[]
      = { MCPCLIENT_ELICIT_ACCEPT, MCPCLIENT_ELICIT_DECLINE };
  *n = e->can_accept ? 2 : 1;
  return e->can_accept ? all : all + 1;
}

/* What a field holds, as its row shows it, into out.  */
static void
elicit_value_text (const struct elicit_field *f, struct buf *out)
{
  if (f->kind == ELICIT_BOOLEAN)
    buf_puts (out, f->on ? "[x]" : "[ ]");
  else if (f->kind == ELICIT_ENUM)
    buf_printf (out, "\xe2\x80\xb9 %s \xe2\x80\xba",
                f->pick >= 0 ? f->labels[f->pick] : _ ("none chosen"));
  else if (f->text.len > 0)
    utf8_show (out, f->text.data, f->text.len, 0);
}

/* What a field takes, for the line under it while it is selected.  */
static void
elicit_takes_text (const struct elicit_field *f, struct buf *out)
{
  if (f->kind == ELICIT_STRING && f->min_len >= 0 && f->max_len >= 0)
    buf_printf (out, _ ("%lld to %lld characters"), f->min_len, f->max_len);
  else if (f->kind == ELICIT_STRING && f->min_len >= 0)
    buf_printf (out, _ ("at least %lld characters"), f->min_len);
  else if (f->kind == ELICIT_STRING && f->max_len >= 0)
    buf_printf (out, _ ("at most %lld characters"), f->max_len);
  if (f->kind == ELICIT_STRING && f->format != NULL)
    {
      cleanup_free char *format = utf8_show_dup (f->format, 0);
      buf_printf (out, "%s%s", out->len > 0 ? ", " : "", format);
    }
  if (f->kind == ELICIT_NUMBER || f->kind == ELICIT_INTEGER)
    {
      buf_puts (out, f->kind == ELICIT_INTEGER ? _ ("a whole number")
                                               : _ ("a number"));
      if (f->has_min)
        {
          buf_printf (out, " \xe2\x89\xa5 ");
          elicit_number_text (out, f->min);
        }
      if (f->has_max)
        {
          buf_printf (out, " \xe2\x89\xa4 ");
          elicit_number_text (out, f->max);
        }
    }
  if (f->description != NULL)
    buf_printf (out, "%s%s", out->len > 0 ? " \xc2\xb7 " : "", f->description);
}

/* A field's row, the line of what it takes while selected, and its
 * refusal once it is to be shown.  */
static void
elicit_draw_field (const struct elicit *e, int i, struct screen_lines *out)
{
  const struct elicit_field *f = &e->fields[i];
  bool selected = i == e->sel;
  struct buf value = BUF_INIT;
  elicit_value_text (f, &value);
  screen_lines_add (out, selected ? THEME_ACCENT : THEME_TEXT, "%s %s%s: %s",
                    selected ? "\xe2\x80\xba" : " ", f->title,
                    f->required ? _ (" (required)") : "",
                    value.len > 0 ? value.data : "");
  buf_free (&value);
  if (selected)
    {
      struct buf takes = BUF_INIT;
      elicit_takes_text (f, &takes);
      if (takes.len > 0)
        screen_lines_add (out, THEME_DIM, "    %s", takes.data);
      buf_free (&takes);
    }
  char why[160];
  const char *refused = elicit_refusal (f, why, sizeof why);
  /* An empty field is refused only once Accept was chosen.  */
  if (refused != NULL && (e->tried || (f->touched && f->text.len > 0)))
    screen_lines_add (out, THEME_WARNING, "    \xe2\x9c\x97 %s", refused);
}

/* The keys' line for the row selected.  */
static const char *
elicit_keys_text (const struct elicit *e)
{
  if (e->n_fields == 0 || e->fields == NULL)
    return _ ("enter chooses \xc2\xb7 esc cancels");
  if (e->sel >= e->n_fields)
    return _ ("\xe2\x86\x91\xe2\x86\x93 moves \xc2\xb7 enter chooses \xc2\xb7 "
              "esc cancels");
  switch (e->fields[e->sel].kind)
    {
    case ELICIT_BOOLEAN:
      return _ (
          "space toggles \xc2\xb7 \xe2\x86\x91\xe2\x86\x93 moves \xc2\xb7 "
          "esc cancels");
    case ELICIT_ENUM:
      return _ (
          "\xe2\x86\x90\xe2\x86\x92 picks \xc2\xb7 \xe2\x86\x91\xe2\x86\x93 "
          "moves \xc2\xb7 esc cancels");
    default:
      return _ ("type to fill in \xc2\xb7 \xe2\x86\x91\xe2\x86\x93 moves "
                "\xc2\xb7 esc cancels");
    }
}

/* The panel's lines; none once the question is gone.  */
static void
elicit_draw (void *state, int cols, struct screen_lines *out)
{
  struct elicit *e = state;
  const struct elicit_question *q = e->ask.question (e->ask.data);
  if (q == NULL)
    return;
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  screen_lines_add (out, THEME_ACCENT, _ ("The MCP server `%s` asks"),
                    q->server);
  /* Its message line by line (shown safe: no control but newlines).  */
  for (const char *l = q->message; l != NULL && *l != '\0';)
    {
      const char *nl = strchr (l, '\n');
      int len = nl != NULL ? (int) (nl - l) : (int) strlen (l);
      screen_lines_add (out, THEME_TEXT, "  %.*s", len, l);
      l = nl != NULL ? nl + 1 : NULL;
    }
  if (!e->can_accept)
    screen_lines_add (out, THEME_DIM, "  %s",
                      _ ("it asks for fields this panel cannot fill in; it "
                         "can only be declined"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  for (int i = 0; e->fields != NULL && i < e->n_fields; i++)
    elicit_draw_field (e, i, out);
  if (e->n_fields > 0)
    screen_lines_add (out, THEME_TEXT, "%s", "");
  int n;
  const enum mcpclient_elicit_action *c = elicit_choices (e, &n);
  for (int i = 0; i < n; i++)
    {
      bool selected = e->n_fields + i == e->sel;
      screen_lines_add (out, selected ? THEME_ACCENT : THEME_TEXT, "%s %d. %s",
                        selected ? "\xe2\x80\xba" : " ", i + 1,
                        c[i] == MCPCLIENT_ELICIT_ACCEPT ? _ ("Accept")
                                                        : _ ("Decline"));
    }
  screen_lines_add (out, THEME_DIM, "%s", elicit_keys_text (e));
}

/* --- keys -------------------------------------------------------------- */

/* Answer, which closes the panel; accepting sends the fields' content,
 * unless one is refused: then every refusal shows, the first selected.  */
static void
elicit_answer (struct elicit *e, enum mcpclient_elicit_action a)
{
  if (e->ask.question (e->ask.data) == NULL)
    return;
  if (a != MCPCLIENT_ELICIT_ACCEPT)
    {
      e->ask.answer (e->ask.data, a, NULL);
      return;
    }
  int refused = elicit_first_refused (e);
  if (refused >= 0)
    {
      e->tried = true;
      e->sel = refused;
      e->host->dirty (e->host->data);
      return;
    }
  cleanup_free char *content = elicit_content (e);
  e->ask.answer (e->ask.data, a, content);
}

/* A change to the selected field's value by a key other than typing:
 * Left/Right (d -1/+1) or space (d 0).  */
static void
elicit_turn (struct elicit_field *f, int d)
{
  int n = (int) f->n_values;
  if (f->kind == ELICIT_BOOLEAN)
    f->on = !f->on;
  else if (f->kind == ELICIT_ENUM && d < 0)
    f->pick = f->pick <= 0 ? n - 1 : f->pick - 1;
  else if (f->kind == ELICIT_ENUM)
    f->pick = f->pick >= n - 1 ? 0 : f->pick + 1;
  f->touched = true;
}

/* A character typed on field f (bounded).  */
static void
elicit_type (struct elicit_field *f, const TermKeyKey *key)
{
  uint32_t cp = key->code.codepoint;
  if (f->kind == ELICIT_BOOLEAN || f->kind == ELICIT_ENUM)
    {
      if (cp == ' ')
        elicit_turn (f, 0);
      return;
    }
  size_t len = strlen (key->utf8);
  if (cp < 0x20 || len == 0 || f->text.len + len > ELICIT_TEXT_MAX)
    return;
  buf_append (&f->text, key->utf8, len);
  f->touched = true;
}

/* Backspace on field f: its last character goes.  */
static void
elicit_erase (struct elicit_field *f)
{
  if (f->kind == ELICIT_BOOLEAN || f->kind == ELICIT_ENUM || f->text.len == 0)
    return;
  size_t i = f->text.len - 1;
  while (i > 0 && ((unsigned char) f->text.data[i] & 0xc0) == 0x80)
    i--;
  f->text.len = i;
  f->text.data[i] = '\0';
  f->touched = true;
}

/* A named key while the question is open; whether it answered.  */
static bool
elicit_keysym (struct elicit *e, const TermKeyKey *key)
{
  int n;
  const enum mcpclient_elicit_action *c = elicit_choices (e, &n);
  int rows = e->n_fields + n;
  struct elicit_field *f
      = e->fields != NULL && e->sel < e->n_fields ? &e->fields[e->sel] : NULL;
  bool back = key->code.sym == TERMKEY_SYM_UP
              || (key->code.sym == TERMKEY_SYM_TAB
                  && (key->modifiers & TERMKEY_KEYMOD_SHIFT) != 0);
  if (key->code.sym == TERMKEY_SYM_ESCAPE)
    {
      elicit_answer (e, MCPCLIENT_ELICIT_CANCEL);
      return true;
    }
  if (back)
    e->sel = e->sel > 0 ? e->sel - 1 : 0;
  else if (key->code.sym == TERMKEY_SYM_DOWN
           || key->code.sym == TERMKEY_SYM_TAB)
    e->sel = e->sel < rows - 1 ? e->sel + 1 : e->sel;
  else if (key->code.sym == TERMKEY_SYM_ENTER && f != NULL)
    e->sel++; /* on to the next row */
  else if (key->code.sym == TERMKEY_SYM_ENTER)
    {
      elicit_answer (e, c[e->sel - e->n_fields]);
      return true;
    }
  else if (f != NULL
           && (key->code.sym == TERMKEY_SYM_LEFT
               || key->code.sym == TERMKEY_SYM_RIGHT)
           && (f->kind == ELICIT_BOOLEAN || f->kind == ELICIT_ENUM))
    elicit_turn (f, key->code.sym == TERMKEY_SYM_LEFT ? -1 : 1);
  else if (f != NULL
           && (key->code.sym == TERMKEY_SYM_BACKSPACE
               || key->code.sym == TERMKEY_SYM_DEL))
    elicit_erase (f);
  else if (f != NULL && key->code.sym == TERMKEY_SYM_SPACE)
    elicit_type (f, &(TermKeyKey){ .type = TERMKEY_TYPE_UNICODE,
                                   .code.codepoint = ' ',
                                   .utf8 = " " });
  return false;
}

/* A key while the question is open.  */
static void
elicit_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct elicit *e = state;
  const struct panel_host *h = e->host;
  (void) tk;
  if (e->ask.question (e->ask.data) == NULL)
    return;
  int n;
  const enum mcpclient_elicit_action *c = elicit_choices (e, &n);
  if (key->type == TERMKEY_TYPE_KEYSYM)
    {
      if (elicit_keysym (e, key))
        return;
    }
  else if (key->type == TERMKEY_TYPE_UNICODE
           && (key->modifiers & ~TERMKEY_KEYMOD_SHIFT) == 0)
    {
      uint32_t cp = key->code.codepoint;
      if (e->fields != NULL && e->sel < e->n_fields)
        elicit_type (&e->fields[e->sel], key);
      else if (cp >= '1' && cp < '1' + (uint32_t) n)
        {
          /* A digit chooses only off the fields, where it is typed.  */
          elicit_answer (e, c[cp - '1']);
          return;
        }
    }
  h->dirty (h->data);
}

/* Free the question's state.  */
static void
elicit_free (void *state)
{
  struct elicit *e = state;
  elicit_fields_free (e);
  free (e);
}

const struct panel_ops elicit_panel_ops = {
  .name = "elicit",
  .draw = elicit_draw,
  .key = elicit_key,
  .free = elicit_free,
};

struct panel
elicit_panel_new (const struct panel_host *host, const struct elicit_host *ask)
{
  struct elicit *e = xcalloc (1, sizeof *e);
  e->host = host;
  e->ask = *ask;
  const struct elicit_question *q = ask->question (ask->data);
  e->can_accept = q != NULL && q->schema != NULL && elicit_parse (e, q->schema);
  return (struct panel){ .ops = &elicit_panel_ops, .state = e };
}
