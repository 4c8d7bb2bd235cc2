/* Unreadable patterns and the scan that finds what they name.  */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "broker/unreadable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One component of a pattern or a path.  */
struct ucomp
{
  const char *s;
  size_t n;
};

/* A pattern split into components; globstar is the index of its "**", or
 * SIZE_MAX.  */
struct upat
{
  struct ucomp *c;
  size_t n;
  size_t globstar;
};

/* Whether the component text s matches the component pattern p, where
 * '*' matches any run of characters.  Iterative, with one backtracking
 * point, so no pattern makes it slow.  */
static bool
unreadable_glob (const char *p, size_t pn, const char *s, size_t sn)
{
  size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;

  while (si < sn)
    {
      if (pi < pn && p[pi] == '*')
        {
          star = pi++;
          mark = si;
        }
      else if (pi < pn && p[pi] == s[si])
        {
          pi++;
          si++;
        }
      else if (star != SIZE_MAX)
        {
          pi = star + 1;
          si = ++mark;
        }
      else
        return false;
    }
  while (pi < pn && p[pi] == '*')
    pi++;
  return pi == pn;
}

/* How many components text has ('/'-separated).  */
static size_t
unreadable_count (const char *text)
{
  size_t n = 1;

  for (const char *p = text; *p != '\0'; p++)
    n += *p == '/';
  return n;
}

/* Split text into components (pointing into text); NULL when out of
 * memory.  */
static struct ucomp *
unreadable_split (const char *text, size_t *n_out)
{
  size_t n = unreadable_count (text), i = 0;
  struct ucomp *c = calloc (n, sizeof *c);
  const char *p = text;

  if (c == NULL)
    return NULL;
  for (;;)
    {
      size_t len = strcspn (p, "/");
      c[i].s = p;
      c[i].n = len;
      i++;
      if (p[len] == '\0')
        break;
      p += len + 1;
    }
  *n_out = n;
  return c;
}

const char *
unreadable_check (const char *pattern)
{
  size_t globstars = 0;
  const char *p = pattern;

  if (*pattern == '\0')
    return "is empty";
  if (*pattern == '/')
    return "is not relative to the workspace";
  for (;;)
    {
      size_t len = strcspn (p, "/");
      if (len == 0)
        return "has an empty component";
      if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return "has a '.' or '..' component";
      if (memmem (p, len, "**", 2) != NULL)
        {
          if (len != 2)
            return "has '**' inside a component (it must be a whole one)";
          if (++globstars > 1)
            return "has more than one '**'";
        }
      if (p[len] == '\0')
        return NULL;
      p += len + 1;
    }
}

/* Compile a checked pattern; -1 when out of memory.  */
static int
unreadable_compile (const char *pattern, struct upat *out)
{
  out->c = unreadable_split (pattern, &out->n);
  if (out->c == NULL)
    return -1;
  out->globstar = SIZE_MAX;
  for (size_t i = 0; i < out->n; i++)
    if (out->c[i].n == 2 && memcmp (out->c[i].s, "**", 2) == 0)
      out->globstar = i;
  return 0;
}

/* Whether components [pi, pi+len) of p match path components [ci, ..).  */
static bool
unreadable_run (const struct upat *p, size_t pi, const struct ucomp *c,
                size_t ci, size_t len)
{
  for (size_t j = 0; j < len; j++)
    if (!unreadable_glob (p->c[pi + j].s, p->c[pi + j].n, c[ci + j].s,
                          c[ci + j].n))
      return false;
  return true;
}

/* Whether the path of m components matches p.  */
static bool
unreadable_pat_match (const struct upat *p, const struct ucomp *c, size_t m)
{
  size_t k = p->globstar, tail;

  if (k == SIZE_MAX)
    return m == p->n && unreadable_run (p, 0, c, 0, m);
  tail = p->n - k - 1;
  return m >= k + tail && unreadable_run (p, 0, c, 0, k)
         && unreadable_run (p, k + 1, c, m - tail, tail);
}

/* Whether something below the directory of d components could match p.  */
static bool
unreadable_pat_below (const struct upat *p, const struct ucomp *c, size_t d)
{
  size_t k = p->globstar;

  if (k == SIZE_MAX)
    return d < p->n && unreadable_run (p, 0, c, 0, d);
  return unreadable_run (p, 0, c, 0, d < k ? d : k);
}

bool
unreadable_match (const char *pattern, const char *rel)
{
  struct upat p;
  struct ucomp *c;
  size_t m;
  bool yes;

  if (unreadable_check (pattern) != NULL
      || unreadable_compile (pattern, &p) < 0)
    return false;
  c = unreadable_split (rel, &m);
  yes = c != NULL && unreadable_pat_match (&p, c, m);
  free (c);
  free (p.c);
  return yes;
}

/* --- the scan -------------------------------------------------------------
 */

struct uinode
{
  dev_t dev;
  ino_t ino;
};

struct uctx
{
  struct unreadable_scan *s;
  struct upat *pats;
  size_t n_pats;
  dev_t dev; /* the root's: no mount crossed */
  struct ucomp comps[UNREADABLE_MAX_DEPTH + 1]; /* the current path */
  char path[PATH_MAX];
  struct uinode *links; /* hidden files with other names */
  size_t n_links, cap_links;
  bool second; /* the pass that hides the other names */
};

static int
unreadable_inode_cmp (const void *a, const void *b)
{
  const struct uinode *x = a, *y = b;

  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino)
    return x->ino < y->ino ? -1 : 1;
  return 0;
}

static int
unreadable_name_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Whether the entry at depth m (1-based) is hidden by a pattern, or as a
 * socket nobody named.  */
static bool
unreadable_hidden (struct uctx *x, size_t m, const struct stat *st)
{
  for (size_t i = 0; i < x->n_pats; i++)
    if (unreadable_pat_match (&x->pats[i], x->comps, m))
      return true;
  if (x->s->sockets && S_ISSOCK (st->st_mode))
    {
      for (size_t i = 0; i < x->s->n_allowed; i++)
        if (strcmp (x->s->allowed[i], x->path) == 0)
          return false;
      return true;
    }
  return false;
}

/* Whether a pass must look below the directory at depth d.  */
static bool
unreadable_descend (struct uctx *x, size_t d)
{
  if (x->s->sockets || x->second)
    return true;
  for (size_t i = 0; i < x->n_pats; i++)
    if (unreadable_pat_below (&x->pats[i], x->comps, d))
      return true;
  return false;
}

static int
unreadable_add_hit (struct uctx *x, bool dir)
{
  struct unreadable_scan *s = x->s;

  if (s->n_hits >= UNREADABLE_MAX_HITS)
    return errno = E2BIG, -1;
  if (s->n_hits % 64 == 0)
    {
      void *more = realloc (s->hits, (s->n_hits + 64) * sizeof *s->hits);
      if (more == NULL)
        return -1;
      s->hits = more;
    }
  s->hits[s->n_hits].rel = strdup (x->path);
  if (s->hits[s->n_hits].rel == NULL)
    return -1;
  s->hits[s->n_hits].dir = dir;
  s->n_hits++;
  return 0;
}

static int
unreadable_add_link (struct uctx *x, const struct stat *st)
{
  if (x->n_links == x->cap_links)
    {
      size_t cap = x->cap_links == 0 ? 16 : x->cap_links * 2;
      void *more = realloc (x->links, cap * sizeof *x->links);
      if (more == NULL)
        return -1;
      x->links = more;
      x->cap_links = cap;
    }
  x->links[x->n_links].dev = st->st_dev;
  x->links[x->n_links].ino = st->st_ino;
  x->n_links++;
  return 0;
}

/* Read the names in dir_fd, sorted; NULL with errno on failure.  */
static char **
unreadable_names (int dir_fd, size_t *n_out)
{
  int fd = dup (dir_fd);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  int saved;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  /* A dup shares the offset: a second pass starts where the first ended.  */
  rewinddir (d);
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (n + 1 >= cap)
        {
          cap = cap == 0 ? 32 : cap * 2;
          char **more = realloc (names, cap * sizeof *names);
          if (more == NULL)
            goto fail;
          names = more;
        }
      if ((names[n] = strdup (de->d_name)) == NULL)
        goto fail;
      n++;
      errno = 0;
    }
  if (errno != 0)
    goto fail;
  closedir (d);
  if (names == NULL && (names = calloc (1, sizeof *names)) == NULL)
    return NULL;
  qsort (names, n, sizeof *names, unreadable_name_cmp);
  names[n] = NULL;
  *n_out = n;
  return names;

fail:
  saved = errno;
  closedir (d);
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  errno = saved != 0 ? saved : ENOMEM;
  return NULL;
}

static void
unreadable_free_names (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

static int unreadable_dir (struct uctx *x, int dir_fd, size_t depth, size_t len,
                           bool inside_hidden);

/* Look at one entry of the directory at depth-1.  */
static int
unreadable_entry (struct uctx *x, int dir_fd, const char *name, size_t depth,
                  size_t len, bool inside_hidden)
{
  struct stat st;
  size_t n = strlen (name), at = len == 0 ? 0 : len + 1;
  bool hit = false;

  if (++x->s->entries > UNREADABLE_MAX_ENTRIES)
    return errno = E2BIG, -1;
  if (at + n + 1 > sizeof x->path)
    return errno = ENAMETOOLONG, -1;
  if (len > 0)
    x->path[len] = '/';
  memcpy (x->path + at, name, n + 1);
  x->comps[depth - 1].s = x->path + at;
  x->comps[depth - 1].n = n;
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (S_ISLNK (st.st_mode))
    return 0;
  if (!inside_hidden)
    {
      bool first = unreadable_hidden (x, depth, &st);
      if (!x->second && first)
        {
          if (unreadable_add_hit (x, S_ISDIR (st.st_mode)) < 0)
            return -1;
          hit = true;
        }
      else if (x->second && !first && !S_ISDIR (st.st_mode))
        {
          struct uinode key = { st.st_dev, st.st_ino };
          if (bsearch (&key, x->links, x->n_links, sizeof key,
                       unreadable_inode_cmp)
                  != NULL
              && unreadable_add_hit (x, false) < 0)
            return -1;
        }
      /* The second pass does not look inside what the first hid.  */
      if (x->second && first)
        return 0;
    }
  if (!x->second && (hit || inside_hidden) && S_ISREG (st.st_mode)
      && st.st_nlink > 1 && unreadable_add_link (x, &st) < 0)
    return -1;
  if (!S_ISDIR (st.st_mode) || st.st_dev != x->dev)
    return 0;
  /* A hidden directory is still walked in the first pass, for files with
   * other names outside it.  */
  if (!hit && !inside_hidden && !unreadable_descend (x, depth))
    return 0;
  if (depth >= UNREADABLE_MAX_DEPTH)
    return errno = ELOOP, -1;
  int sub
      = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0)
    return errno == ENOENT ? 0 : -1;
  int rc = unreadable_dir (x, sub, depth, at + n, hit || inside_hidden);
  close (sub);
  return rc;
}

/* Walk the directory at depth (its path is x->path[0, len)).  */
static int
unreadable_dir (struct uctx *x, int dir_fd, size_t depth, size_t len,
                bool inside_hidden)
{
  size_t n = 0;
  char **names = unreadable_names (dir_fd, &n);
  int rc = 0;

  if (names == NULL)
    return -1;
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = unreadable_entry (x, dir_fd, names[i], depth + 1, len, inside_hidden);
  unreadable_free_names (names, n);
  x->path[len] = '\0';
  return rc;
}

void
unreadable_scan_free (struct unreadable_scan *s)
{
  for (size_t i = 0; i < s->n_hits; i++)
    free (s->hits[i].rel);
  free (s->hits);
  s->hits = NULL;
  s->n_hits = 0;
}

int
unreadable_scan (int root_fd, struct unreadable_scan *s)
{
  struct uctx *x = calloc (1, sizeof *x);
  struct stat st;
  int rc = -1, saved;

  s->hits = NULL;
  s->n_hits = 0;
  s->entries = 0;
  if (x == NULL)
    return -1;
  x->s = s;
  x->n_pats = s->n_patterns;
  x->pats = calloc (s->n_patterns + 1, sizeof *x->pats);
  if (x->pats == NULL || fstat (root_fd, &st) < 0)
    goto out;
  x->dev = st.st_dev;
  for (size_t i = 0; i < s->n_patterns; i++)
    if (unreadable_check (s->patterns[i]) != NULL)
      {
        errno = EINVAL;
        goto out;
      }
    else if (unreadable_compile (s->patterns[i], &x->pats[i]) < 0)
      goto out;
  if (unreadable_dir (x, root_fd, 0, 0, false) < 0)
    goto out;
  if (x->n_links > 0)
    {
      qsort (x->links, x->n_links, sizeof *x->links, unreadable_inode_cmp);
      x->second = true;
      if (unreadable_dir (x, root_fd, 0, 0, false) < 0)
        goto out;
    }
  rc = 0;

out:
  saved = errno;
  for (size_t i = 0; x->pats != NULL && i < x->n_pats; i++)
    free (x->pats[i].c);
  free (x->pats);
  free (x->links);
  free (x);
  if (rc < 0)
    unreadable_scan_free (s);
  errno = saved;
  return rc;
}
