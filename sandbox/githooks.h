/* The directory core.hooksPath names, when it lies inside the workspace:
 * git runs what is there at the person's next commit, checkout or push
 * (husky's .husky/_, a .githooks), so every backend keeps it as .git is
 * kept, refused at publication (and read-only inside where it can).  */
#ifndef CRUCIBLE_SANDBOX_GITHOOKS_H
#define CRUCIBLE_SANDBOX_GITHOOKS_H

/* The hooks directory core.hooksPath names for the repository at
 * workspace (its git directory gitdir, relative to it, or NULL for
 * ".git"), relative to workspace, when it lies inside it; NULL when it is
 * not set or lies outside.  The person's global files are read, then the
 * repository's own, the last one set winning; relative values are from
 * the top of the work tree, taken to be the workspace; "~/" is the home
 * directory; include.path is not followed.  A directory not there yet is
 * named by its spelling when that is plainly inside.  Owned.  */
char *githooks_dir (const char *workspace, const char *gitdir);

#endif
