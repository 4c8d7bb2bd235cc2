/* Colours: theme files, colour pairs, NO_COLOR.  */
#include <config.h>

#include "tui/theme.h"

#include <ctype.h>
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"

/* Pairs for output cells are made on demand, up to this many.  */
#define THEME_CELL_PAIRS 240

/* A role's colour and attributes at one colour depth.  */
struct theme_entry
{
  int fg[3]; /* 256, 16 and 8 colours; -1 is the terminal's default */
  int attrs;
  bool set;
};

struct theme_state
{
  struct theme_entry roles[THEME_ROLE_COUNT];
  int depth; /* 0: 256 colours, 1: 16, 2: 8, -1: no colour */
  int colors;
  int cell_key[THEME_CELL_PAIRS];
  int n_cell;
};

/* The session's one theme: colours are a property of the terminal, which
 * the process has one of.  */
static struct theme_state theme;

static const char *const theme_role_names[THEME_ROLE_COUNT]
    = { "text",    "dim",    "accent",   "warning", "error",
        "success", "border", "selected", "prompt" };

static const char *const theme_colour_names[8]
    = { "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white" };

/* Read a colour token: "default", a name, or a number 0-255.  */
static int
theme_parse_colour (const char *tok, int *out)
{
  if (strcmp (tok, "default") == 0)
    {
      *out = -1;
      return 0;
    }
  for (int i = 0; i < 8; i++)
    if (strcmp (tok, theme_colour_names[i]) == 0)
      {
        *out = i;
        return 0;
      }
  char *end;
  errno = 0;
  long v = strtol (tok, &end, 10);
  if (errno != 0 || *end != '\0' || end == tok || v < 0 || v > 255)
    return -1;
  *out = (int) v;
  return 0;
}

/* Read an attribute list: "-" or names joined by commas.  */
static int
theme_parse_attrs (char *tok, int *out)
{
  static const struct
  {
    const char *name;
    int attr;
  } names[] = { { "bold", A_BOLD },
                { "dim", A_DIM },
                { "reverse", A_REVERSE },
                { "underline", A_UNDERLINE },
                { "italic", A_ITALIC } };
  *out = 0;
  if (strcmp (tok, "-") == 0)
    return 0;
  for (char *save = NULL, *w = strtok_r (tok, ",", &save); w != NULL;
       w = strtok_r (NULL, ",", &save))
    {
      size_t i = 0;
      while (i < sizeof names / sizeof *names && strcmp (w, names[i].name) != 0)
        i++;
      if (i == sizeof names / sizeof *names)
        return -1;
      *out |= names[i].attr;
    }
  return 0;
}

/* Parse one line of a theme file into st.  */
static int
theme_parse_line (struct theme_state *st, char *line, const char *path,
                  int lineno, struct cr_error **err)
{
  char *save = NULL;
  char *tok[5];
  int n = 0;
  for (char *w = strtok_r (line, " \t\r\n", &save); w != NULL && n < 5;
       w = strtok_r (NULL, " \t\r\n", &save))
    tok[n++] = w;
  if (n == 0 || tok[0][0] == '#')
    return 0;
  if (n != 5 || strtok_r (NULL, " \t\r\n", &save) != NULL)
    return cr_error_set (err, 0,
                         _ ("theme %s: line %d: expected a role, three "
                            "colours and attributes"),
                         path, lineno);
  int role = 0;
  while (role < THEME_ROLE_COUNT
         && strcmp (tok[0], theme_role_names[role]) != 0)
    role++;
  if (role == THEME_ROLE_COUNT)
    return cr_error_set (err, 0, _ ("theme %s: line %d: unknown role '%s'"),
                         path, lineno, tok[0]);
  struct theme_entry *e = &st->roles[role];
  for (int i = 0; i < 3; i++)
    if (theme_parse_colour (tok[1 + i], &e->fg[i]) < 0)
      return cr_error_set (err, 0,
                           _ ("theme %s: line %d: '%s' is not a colour"), path,
                           lineno, tok[1 + i]);
  if (theme_parse_attrs (tok[4], &e->attrs) < 0)
    return cr_error_set (err, 0,
                         _ ("theme %s: line %d: '%s' is not a list of "
                            "attributes"),
                         path, lineno, tok[4]);
  e->set = true;
  return 0;
}

/* The default theme, compiled in from themes/dark.theme.  */
#include "tui/theme_builtin.h"

/* Read a theme from f, which path names in messages.  */
static int
theme_parse (struct theme_state *st, FILE *f, const char *path,
             struct cr_error **err)
{
  char line[512];
  int lineno = 0;
  while (fgets (line, sizeof line, f) != NULL)
    if (theme_parse_line (st, line, path, ++lineno, err) < 0)
      return -1;
  for (int r = 0; r < THEME_ROLE_COUNT; r++)
    if (!st->roles[r].set)
      return cr_error_set (err, 0, _ ("theme %s: the role '%s' is missing"),
                           path, theme_role_names[r]);
  return 0;
}

/* Read a whole theme file.  */
static int
theme_read (struct theme_state *st, const char *path, struct cr_error **err)
{
  cleanup_fclose FILE *f = fopen (path, "re");
  if (f == NULL)
    return cr_error_set (err, errno, _ ("reading theme %s"), path);
  return theme_parse (st, f, path, err);
}

/* The compiled-in default theme; it cannot fail to parse (the build
 * made it from a theme file the tests read).  */
static void
theme_read_builtin (struct theme_state *st)
{
  struct cr_error *err = NULL;
  cleanup_fclose FILE *f = fmemopen ((void *) theme_builtin_text,
                                     sizeof theme_builtin_text - 1, "r");
  if (f == NULL || theme_parse (st, f, "(built in)", &err) < 0)
    abort ();
}

/* Whether a theme name is a plain name (no path, no dots).  */
static bool
theme_name_ok (const char *name)
{
  if (*name == '\0')
    return false;
  for (const char *p = name; *p != '\0'; p++)
    if (!isalnum ((unsigned char) *p) && *p != '-' && *p != '_')
      return false;
  return true;
}

/* Choose the colour depth for this terminal.  */
static void
theme_pick_depth (struct theme_state *st)
{
  const char *no_color = getenv ("NO_COLOR");
  st->colors = 0;
  st->depth = -1;
  if ((no_color != NULL && *no_color != '\0') || !has_colors ())
    return;
  start_color ();
  use_default_colors ();
  st->colors = COLORS;
  st->depth = COLORS >= 256 ? 0 : COLORS >= 16 ? 1 : COLORS >= 8 ? 2 : -1;
  if (st->depth < 0)
    st->colors = 0;
}

/* Make the pairs of the roles.  */
static void
theme_make_pairs (struct theme_state *st)
{
  if (st->depth < 0)
    return;
  for (int r = 0; r < THEME_ROLE_COUNT; r++)
    init_pair ((short) (r + 1), (short) st->roles[r].fg[st->depth], -1);
}

/* Whether dir holds name's theme file.  */
static bool
theme_dir_has (const char *dir, const char *name)
{
  cleanup_free char *probe = xasprintf ("%s/%s.theme", dir, name);
  return access (probe, R_OK) == 0;
}

/* Where name's theme file is: $CRUCIBLE_THEME_DIR alone when set; else
 * share/crucible/themes beside the program (an installation moved as a
 * whole keeps its themes), the directory configure chose, and, for the
 * binary the build directory holds, the source tree it was configured
 * from.  NULL when none of them has it.  Owned.  */
static char *
theme_dir (const char *name)
{
  const char *env = getenv ("CRUCIBLE_THEME_DIR");
  if (env != NULL && *env != '\0')
    return xstrdup (env);
  char exe[4096];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = NULL;
  if (n > 0)
    {
      exe[n] = '\0';
      slash = strrchr (exe, '/');
    }
  if (slash != NULL)
    {
      *slash = '\0';
      char *dir = xasprintf ("%s/../share/crucible/themes", exe);
      if (theme_dir_has (dir, name))
        return dir;
      free (dir);
    }
  if (theme_dir_has (CRUCIBLE_THEMEDIR, name))
    return xstrdup (CRUCIBLE_THEMEDIR);
  if (slash != NULL && strcmp (exe, CRUCIBLE_BUILDDIR) == 0
      && theme_dir_has (CRUCIBLE_SRC_THEMEDIR, name))
    return xstrdup (CRUCIBLE_SRC_THEMEDIR);
  return NULL;
}

/* Start the theme st on this terminal.  */
static void
theme_apply (struct theme_state *st)
{
  theme_pick_depth (st);
  theme_make_pairs (st);
  theme = *st;
}

int
theme_load (const char *name, const char *dir, struct cr_error **err)
{
  struct theme_state st = { 0 };
  cleanup_free char *found = NULL;
  if (name == NULL)
    name = THEME_DEFAULT;
  if (!theme_name_ok (name))
    return cr_error_set (err, 0, _ ("theme '%s': not a theme name"), name);
  if (dir == NULL)
    {
      found = theme_dir (name);
      dir = found;
    }
  if (dir == NULL && strcmp (name, THEME_DEFAULT) == 0)
    {
      theme_load_default ();
      return 0;
    }
  if (dir == NULL)
    return cr_error_set (err, ENOENT, _ ("reading theme %s/%s.theme"),
                         CRUCIBLE_THEMEDIR, name);
  cleanup_free char *path = xasprintf ("%s/%s.theme", dir, name);
  if (theme_read (&st, path, err) < 0)
    return -1;
  theme_apply (&st);
  return 0;
}

void
theme_load_default (void)
{
  struct theme_state st = { 0 };
  theme_read_builtin (&st);
  theme_apply (&st);
}

int
theme_attr (enum theme_role role)
{
  const struct theme_entry *e = &theme.roles[role];
  int attrs = e->attrs;
  if (theme.depth < 0)
    {
      /* Without colour the accent and warnings must still stand out.  */
      if (role == THEME_ACCENT || role == THEME_WARNING || role == THEME_ERROR)
        attrs |= A_BOLD;
      return attrs;
    }
  int fg = e->fg[theme.depth];
  /* On 8 colours a bright colour is the normal one in bold.  */
  if (theme.depth == 2 && fg >= 8)
    attrs |= A_BOLD;
  return attrs | COLOR_PAIR (role + 1);
}

/* A 256-colour index brought down to the 16 basic ones.  */
static int
theme_down16 (int c)
{
  if (c < 16)
    return c;
  if (c >= 232)
    return c < 238 ? 0 : c < 244 ? 8 : c < 250 ? 7 : 15;
  int i = c - 16, r = i / 36, g = (i / 6) % 6, b = i % 6;
  int base = (r >= 3 ? 1 : 0) | (g >= 3 ? 2 : 0) | (b >= 3 ? 4 : 0);
  bool bright = r >= 4 || g >= 4 || b >= 4;
  return base + (bright && base != 0 ? 8 : 0);
}

/* A colour for this terminal's depth; *bold is set where 8 colours make
 * a bright colour bold.  */
static int
theme_map (int c, bool *bold)
{
  if (c < 0 || theme.depth == 0)
    return c;
  c = theme_down16 (c);
  if (theme.depth == 2 && c >= 8)
    {
      *bold = true;
      c -= 8;
    }
  return c;
}

int
theme_cell_attr (int fg, int bg)
{
  if (theme.depth < 0 || (fg < 0 && bg < 0))
    return 0;
  bool bold = false;
  fg = theme_map (fg, &bold);
  bg = theme_map (bg, &(bool){ false });
  int key = (fg + 1) * 257 + (bg + 1);
  int attrs = bold ? A_BOLD : 0;
  for (int i = 0; i < theme.n_cell; i++)
    if (theme.cell_key[i] == key)
      return attrs | COLOR_PAIR (THEME_ROLE_COUNT + 1 + i);
  int pair = THEME_ROLE_COUNT + 1 + theme.n_cell;
  if (theme.n_cell == THEME_CELL_PAIRS || pair >= COLOR_PAIRS)
    return attrs;
  init_pair ((short) pair, (short) fg, (short) bg);
  theme.cell_key[theme.n_cell++] = key;
  return attrs | COLOR_PAIR (pair);
}

int
theme_colors (void)
{
  return theme.colors;
}
