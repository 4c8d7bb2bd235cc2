/* Functions taken from a library loaded at run time.  */
#include <config.h>

#include "sandbox/dynload.h"

#include <dlfcn.h>
#include <string.h>

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
