/* Text for the person at the terminal goes through _(); text for the model
 * and machine output never does.  */
#ifndef CRUCIBLE_LIB_I18N_H
#define CRUCIBLE_LIB_I18N_H

#ifdef ENABLE_NLS
#include <libintl.h>
#define _(s) gettext (s)
#define P_(s, p, n) ngettext (s, p, n)
#else
#define _(s) (s)
#define P_(s, p, n) ((n) == 1 ? (s) : (p))
#endif
#define N_(s) (s)

#endif
