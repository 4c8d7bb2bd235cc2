/* Scope-bound release of resources (crun's model): a variable declared
 * `cleanup_free char *p = NULL;` is freed on every return path.  */
#ifndef CRUCIBLE_LIB_CLEANUP_H
#define CRUCIBLE_LIB_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void
cleanup_freep (void *p)
{
  void **pp = (void **) p;
  free (*pp);
}

static inline void
cleanup_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

static inline void
cleanup_fclosep (FILE **f)
{
  if (*f != NULL)
    fclose (*f);
}

static inline void
cleanup_closedirp (DIR **d)
{
  if (*d != NULL)
    closedir (*d);
}

#define cleanup_free __attribute__ ((cleanup (cleanup_freep)))
#define cleanup_close __attribute__ ((cleanup (cleanup_closep)))
#define cleanup_fclose __attribute__ ((cleanup (cleanup_fclosep)))
#define cleanup_closedir __attribute__ ((cleanup (cleanup_closedirp)))

/* Hand a descriptor out of a cleanup_close scope.  */
static inline int
steal_fd (int *fd)
{
  int ret = *fd;
  *fd = -1;
  return ret;
}

/* Hand a pointer out of a cleanup_free scope.  */
static inline void *
steal_pointer (void *pp)
{
  void **p = (void **) pp;
  void *ret = *p;
  *p = NULL;
  return ret;
}

#endif
