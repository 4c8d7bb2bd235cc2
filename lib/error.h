/* The error type shared by every layer is part of the installed interface
 * (include/crucible/error.h), so that a backend built outside this tree
 * reports failures the way crucible's own do.  */
#ifndef CRUCIBLE_LIB_ERROR_H
#define CRUCIBLE_LIB_ERROR_H

#include <crucible/error.h>

#endif
