/* The sandbox backend interface is installed with libcrucible-sandbox
 * (include/crucible/sandbox.h); crucible's own code reaches it here.  */
#ifndef CRUCIBLE_SANDBOX_BACKEND_H
#define CRUCIBLE_SANDBOX_BACKEND_H

#include <crucible/sandbox.h>

#endif
