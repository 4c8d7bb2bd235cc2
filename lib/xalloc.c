/* Allocation that aborts on exhaustion rather than limping on.  */
#include <config.h>

#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Say that memory ran out, without allocating, and abort.  */
static void __attribute__ ((noreturn)) xalloc_die (void)
{
  static const char msg[] = "crucible: out of memory\n";
  ssize_t n = write (STDERR_FILENO, msg, sizeof msg - 1);
  (void) n;
  abort ();
}

void *
xmalloc (size_t size)
{
  void *p = malloc (size ? size : 1);
  if (p == NULL)
    xalloc_die ();
  return p;
}

void *
xcalloc (size_t nmemb, size_t size)
{
  void *p = calloc (nmemb ? nmemb : 1, size ? size : 1);
  if (p == NULL)
    xalloc_die ();
  return p;
}

void *
xrealloc (void *ptr, size_t size)
{
  void *p = realloc (ptr, size ? size : 1);
  if (p == NULL)
    xalloc_die ();
  return p;
}

char *
xstrdup (const char *s)
{
  return xmemdup (s, strlen (s) + 1);
}

char *
xstrndup (const char *s, size_t n)
{
  size_t len = strnlen (s, n);
  char *p = xmalloc (len + 1);
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

void *
xmemdup (const void *src, size_t n)
{
  void *p = xmalloc (n);
  memcpy (p, src, n);
  return p;
}

char *
xvasprintf (const char *fmt, va_list ap)
{
  char *s;
  if (vasprintf (&s, fmt, ap) < 0)
    xalloc_die ();
  return s;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s;
  va_start (ap, fmt);
  s = xvasprintf (fmt, ap);
  va_end (ap);
  return s;
}
