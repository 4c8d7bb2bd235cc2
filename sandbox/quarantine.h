/* Quarantine: a publication whose rollback could not be proved is kept, as
 * evidence, in this user's state directory (quarantine/ID), with its log,
 * what it staged, the root's backed-up baseline and why it was kept.
 * `crucible sandbox quarantine` lists, restores and drops entries.  */
#ifndef CRUCIBLE_SANDBOX_QUARANTINE_H
#define CRUCIBLE_SANDBOX_QUARANTINE_H

#include <stddef.h>

#include "lib/error.h"

#define QUARANTINE_DIR "quarantine"

struct quarantine_entry
{
  char *id;
  char *root;     /* the root it was publishing into, or NULL */
  long long when; /* when the transaction began (seconds since the epoch) */
  char *reason;   /* why it was kept */
};

/* Move the transaction statedir/txn/ID into quarantine, saying why.  */
int quarantine_keep (const char *statedir, const char *id, const char *why,
                     struct cr_error **err);

/* Every entry, oldest first.  */
int quarantine_list (const char *statedir, struct quarantine_entry **out,
                     size_t *n, struct cr_error **err);

void quarantine_entries_free (struct quarantine_entry *e, size_t n);

/* Whether id names an entry (a plain name, present).  */
int quarantine_check_id (const char *statedir, const char *id,
                         struct cr_error **err);

/* Remove an entry and all it keeps.  */
int quarantine_drop (const char *statedir, const char *id,
                     struct cr_error **err);

/* Put an entry's root back to the baseline its transaction recorded,
 * provided every path it touched is still either as it was before or as
 * the transaction left it; otherwise refuse, naming the first that is
 * neither.  Removes the entry once the root is proved restored.  */
int quarantine_restore (const char *statedir, const char *id,
                        struct cr_error **err);

#endif
