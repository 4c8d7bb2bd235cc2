/* Functions taken from a library loaded at run time.  */
#include <config.h>

#include "sandbox/dynload.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether path (LD_LIBRARY_PATH's value, entries separated by ':' or ';'
 * as ld.so reads it) has an entry that does not begin with '/'.  */
static bool
dynload_path_relative (const char *path)
{
  for (const char *p = path;;)
    {
      size_t n = strcspn (p, ":;");
      if (n == 0 || p[0] != '/')
        return true;
      if (p[n] == '\0')
        return false;
      p += n + 1;
    }
}

void *
dynload_open (const char *soname, const char **why)
{
  const char *path = getenv ("LD_LIBRARY_PATH");
  if (path != NULL && dynload_path_relative (path))
    {
      *why = DYNLOAD_RELATIVE_PATH;
      return NULL;
    }
  void *lib = dlopen (soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib == NULL)
    {
      const char *e = dlerror ();
      *why = e != NULL ? e : "not found";
    }
  return lib;
}

const char *
dynload_take (void *lib, const struct dynload_symbol *syms, size_t n,
              void *into)
{
  for (size_t i = 0; i < n; i++)
    {
      void *f = dlsym (lib, syms[i].name);
      if (f == NULL)
        return syms[i].name;
      /* A data pointer from dlsym becomes the function pointer it names
       * (POSIX guarantees the representation).  */
      memcpy ((char *) into + syms[i].offset, &f, sizeof f);
    }
  return NULL;
}
