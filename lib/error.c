/* The error type shared by every layer.  */
#include <config.h>

#include "lib/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

/* Make the text of an error, appending strerror(code) when code is set.  */
static char *
error_format (int code, const char *fmt, va_list ap)
{
  char *text = xvasprintf (fmt, ap);
  if (code == 0)
    return text;
  char *with_errno = xasprintf ("%s: %s", text, strerror (code));
  free (text);
  return with_errno;
}

int
cr_error_set (struct cr_error **err, int code, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL)
    return -1;
  cr_error_clear (err);
  *err = xmalloc (sizeof **err);
  (*err)->code = code;
  (*err)->refused_feature = -1;
  va_start (ap, fmt);
  (*err)->msg = error_format (code, fmt, ap);
  va_end (ap);
  return -1;
}

int
cr_error_prefix (struct cr_error **err, const char *fmt, ...)
{
  va_list ap;
  char *context;

  if (err == NULL)
    return -1;
  va_start (ap, fmt);
  context = xvasprintf (fmt, ap);
  va_end (ap);
  if (*err == NULL)
    {
      *err = xmalloc (sizeof **err);
      (*err)->code = 0;
      (*err)->refused_feature = -1;
      (*err)->msg = context;
      return -1;
    }
  char *joined = xasprintf ("%s: %s", context, (*err)->msg);
  free (context);
  free ((*err)->msg);
  (*err)->msg = joined;
  return -1;
}

void
cr_error_free (struct cr_error *err)
{
  if (err == NULL)
    return;
  free (err->msg);
  free (err);
}

void
cr_error_clear (struct cr_error **err)
{
  cr_error_free (*err);
  *err = NULL;
}
