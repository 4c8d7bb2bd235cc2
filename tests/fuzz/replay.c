/* Replay a fuzz corpus through LLVMFuzzerTestOneInput without libFuzzer,
 * so make check runs every stored input under the ordinary build (and its
 * sanitizers).  Usage: replay [DIR]...; with no DIR, the corpus under
 * $CRUCIBLE_SRCDIR/tests/fuzz/ that FUZZ_CORPUS names (one replay program
 * per target).  Speaks TAP: one line per file.  A
 * crash is the failure (the process dies mid-plan); a missing or empty
 * corpus is a failure too, never a pass.  */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The corpus under tests/fuzz/ this replay reads by default.  */
#ifndef FUZZ_CORPUS
#define FUZZ_CORPUS "corpus"
#endif

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Read a whole file into a fresh buffer of exactly its size.  */
static uint8_t *
slurp (const char *path, size_t *len)
{
  cleanup_fclose FILE *f = fopen (path, "rb");
  uint8_t *data = NULL;
  size_t cap = 0, n = 0;
  if (f == NULL)
    return NULL;
  for (;;)
    {
      if (n == cap)
        data = xrealloc (data, cap = cap ? cap * 2 : 4096);
      size_t got = fread (data + n, 1, cap - n, f);
      n += got;
      if (got == 0)
        break;
    }
  if (ferror (f))
    {
      free (data);
      return NULL;
    }
  *len = n;
  /* An exact-size copy, so a read past the end is caught.  */
  uint8_t *exact = xmemdup (data, n ? n : 1);
  free (data);
  return exact;
}

/* The regular files of dir, sorted, as full paths.  */
static size_t
list_dir (const char *dir, char ***out)
{
  cleanup_closedir DIR *d = opendir (dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0;
  if (d == NULL)
    return 0;
  while ((e = readdir (d)) != NULL)
    {
      struct stat st;
      char *path = xasprintf ("%s/%s", dir, e->d_name);
      if (e->d_name[0] == '.' || stat (path, &st) < 0 || !S_ISREG (st.st_mode))
        {
          free (path);
          continue;
        }
      names = xrealloc (names, (n + 1) * sizeof *names);
      names[n++] = path;
    }
  if (n > 0)
    qsort (names, n, sizeof *names, cmp_names);
  *out = names;
  return n;
}

int
main (int argc, char **argv)
{
  cleanup_free char *fallback = NULL;
  char **paths = NULL;
  size_t n = 0;
  int failed = 0;

  if (argc < 2)
    {
      const char *src = getenv ("CRUCIBLE_SRCDIR");
      fallback = xasprintf ("%s/tests/fuzz/%s", src ? src : ".", FUZZ_CORPUS);
    }
  for (int i = fallback ? 0 : 1; i < (fallback ? 1 : argc); i++)
    {
      const char *dir = fallback ? fallback : argv[i];
      char **more = NULL;
      size_t k = list_dir (dir, &more);
      if (k == 0)
        {
          printf ("Bail out! no corpus files in %s\n", dir);
          return 1;
        }
      paths = xrealloc (paths, (n + k) * sizeof *paths);
      memcpy (paths + n, more, k * sizeof *more);
      n += k;
      free (more);
    }
  printf ("1..%zu\n", n);
  for (size_t i = 0; i < n; i++)
    {
      size_t len = 0;
      uint8_t *data = slurp (paths[i], &len);
      if (data == NULL)
        {
          printf ("not ok %zu - %s: %s\n", i + 1, paths[i], strerror (errno));
          failed = 1;
        }
      else
        {
          fflush (stdout);
          LLVMFuzzerTestOneInput (data, len);
          printf ("ok %zu - %s\n", i + 1, strrchr (paths[i], '/') + 1);
        }
      free (data);
      free (paths[i]);
    }
  free (paths);
  return failed;
}
