/* The sandbox's user namespaces made by crucible itself, so that the
 * user's groups are mapped inside (doc/linux-confinement.md, "Groups the
 * sandbox does not map").  bubblewrap 0.8 writes one-line maps of its
 * own; a file or directory of any other group cannot be copied up by the
 * overlay inside (EOVERFLOW).  Here, where the machine allows it, a pair
 * is made the way bwrap's --disable-userns makes its own:
 *
 *   outer  (bwrap's --userns): uid 0 and gid 0 inside are the user's uid
 *          and gid (devpts needs a root inside), each other group mapped
 *          to itself; user.max_user_namespaces is 1 there, so the inner
 *          one is the last that can ever be made below it;
 *   inner  (bwrap's --userns2, where the broker and the workload run):
 *          the user's uid and gid as themselves again, the other groups
 *          to themselves.
 *
 * setgroups is "deny" in both, so nothing inside can drop a group (a
 * file denying its group would open up) nor take one.  The workload
 * gains no group: the mapped ones are the very groups its process
 * already holds outside, now named instead of shown as the overflow
 * group.
 *
 * Who writes the outer maps: crucible run as root writes them itself;
 * otherwise only Debian's setuid helpers newuidmap and newgidmap (package
 * uidmap) can, and newgidmap maps no group but the user's primary one
 * (from the password database) unless /etc/subgid lists it for the user.
 * On Debian 12 useradd gives each user a range from 100000 up there, and
 * no real group: a supplementary group is mapped only where an
 * administrator added a line "user:GID:1".  Where nothing beyond the
 * user's own group could be mapped, no pair is made and bwrap makes its
 * own namespace as before.  */
#ifndef CRUCIBLE_SANDBOX_USERNS_H
#define CRUCIBLE_SANDBOX_USERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "crucible/error.h"

/* The most groups mapped beside the user's own.  */
#define USERNS_MAX_GROUPS 64

/* Where newuidmap and newgidmap are looked for, and the subordinate
 * group file they read.  */
#define USERNS_NEWUIDMAP "/usr/bin/newuidmap"
#define USERNS_NEWGIDMAP "/usr/bin/newgidmap"
#define USERNS_SUBGID "/etc/subgid"

/* Which groups a pair would map, decided before anything is made.  */
struct userns_plan
{
  uid_t uid;    /* the sandbox's user: crucible's effective uid */
  gid_t gid;    /* and group: its effective gid */
  bool as_root; /* crucible writes the outer maps itself */
  gid_t groups[USERNS_MAX_GROUPS]; /* mapped beside gid, to themselves */
  size_t n_groups;
};

/* The pair made, or both -1.  */
struct userns_pair
{
  int outer;
  int inner;
};

#define USERNS_PAIR_INIT                                                       \
  {                                                                            \
    -1, -1                                                                     \
  }

/* Decide which of crucible's own groups (getgroups) the sandbox can map
 * here: as root all of them, otherwise those /etc/subgid gives the user,
 * and only when newuidmap and newgidmap are there.  Returns whether any
 * group beyond gid would be mapped (a pair is worth making).  */
bool userns_plan_groups (struct userns_plan *plan);

/* Whether the subordinate-group text (/etc/subgid's form: "owner:first:
 * count" lines, owner a name or a uid) gives user name (uid uid) the
 * single group gid.  */
bool userns_subgid_allows (const char *text, const char *name, uid_t uid,
                           gid_t gid);

/* Make the pair plan describes.  Returns 0 and sets out; < 0 with err
 * when a step failed (nothing is left behind).  */
int userns_make (const struct userns_plan *plan, struct userns_pair *out,
                 struct cr_error **err);

void userns_pair_close (struct userns_pair *p);

/* Scope-bound closing of a pair (lib/cleanup.h's model).  */
#define cleanup_userns __attribute__ ((cleanup (userns_pair_close)))

#endif
