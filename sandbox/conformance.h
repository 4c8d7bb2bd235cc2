/* The conformance audit is installed with libcrucible-sandbox
 * (include/crucible/conformance.h); crucible's own code reaches it here.  */
#ifndef CRUCIBLE_SANDBOX_CONFORMANCE_H
#define CRUCIBLE_SANDBOX_CONFORMANCE_H

#include <crucible/conformance.h>

#endif
