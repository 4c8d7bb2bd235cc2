/* Tests for sandbox/pubplan.c's scan with what sandbox/pubguard.c keeps:
 * names in every spelling, git configuration that names a program, git
 * directories known by their shape, new repositories, configured roots,
 * and the removal of a directory that holds one, over hand-made upper and
 * lower directories.  Each refusal beside its control.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "sandbox/pubguard.h"
#include "sandbox/pubplan.h"

/* A scratch directory with root/ (the lower), upper/ and templates/.  */
struct scratch
{
  char dir[64];
  char *root, *upper, *templates;
};

static void
scratch_make (struct scratch *s)
{
  strcpy (s->dir, "/tmp/test_pubplan.XXXXXX");
  assert_non_null (mkdtemp (s->dir));
  s->root = xasprintf ("%s/root", s->dir);
  s->upper = xasprintf ("%s/upper", s->dir);
  s->templates = xasprintf ("%s/templates", s->dir);
  assert_int_equal (mkdir (s->root, 0755), 0);
  assert_int_equal (mkdir (s->upper, 0755), 0);
  assert_int_equal (mkdir (s->templates, 0755), 0);
}

static void
scratch_free (struct scratch *s)
{
  char *cmd = xasprintf ("rm -rf '%s'", s->dir);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (s->root);
  free (s->upper);
  free (s->templates);
}

/* Write text to base/rel, making the directories above it.  */
static void
put (const char *base, const char *rel, const char *text)
{
  char *path = xasprintf ("%s/%s", base, rel);
  char *cmd = xasprintf ("mkdir -p \"$(dirname '%s')\"", path);
  assert_int_equal (system (cmd), 0);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
  free (cmd);
  free (path);
}

/* Make the directory base/rel and those above it.  */
static void
dir (const char *base, const char *rel)
{
  char *cmd = xasprintf ("mkdir -p '%s/%s'", base, rel);
  assert_int_equal (system (cmd), 0);
  free (cmd);
}

/* A git directory's shape at base/rel.  */
static void
gitdir (const char *base, const char *rel)
{
  char *head = xasprintf ("%s/HEAD", rel),
       *objects = xasprintf ("%s/objects", rel);
  put (base, head, "ref: refs/heads/main\n");
  dir (base, objects);
  free (head);
  free (objects);
}

/* Whether the plan changes path.  */
static bool
planned (const struct pubplan *plan, const char *path)
{
  for (size_t i = 0; i < plan->n; i++)
    if (strcmp (plan->changes[i].path, path) == 0)
      return true;
  return false;
}

/* Whether the plan leaves out exactly "path (why)".  */
static bool
left_out (const struct pubplan *plan, const char *entry)
{
  for (size_t i = 0; i < plan->n_left_out; i++)
    if (strcmp (plan->left_out[i], entry) == 0)
      return true;
  return false;
}

/* Scan s with the roots given.  */
static void
scan (struct scratch *s, const struct pubguard_root *roots, size_t n,
      struct pubplan *plan)
{
  struct pubguard g
      = { .roots = roots, .n_roots = n, .git_templates = s->templates };
  struct cr_error *err = NULL;
  memset (plan, 0, sizeof *plan);
  assert_int_equal (pubplan_scan (s->upper, s->root, &g, plan, &err), 0);
}

static void
test_classify (void **state)
{
  (void) state;
  static const char *const git[]
      = { ".git", ".GIT", ".Git", ".git.", ".git ", "git~1", "GIT~1" };
  static const char *const agent[]
      = { ".crucible", ".claude", ".codex", ".gemini", ".cursor",
          ".vscode",   ".VSCode", ".idea",  ".envrc",  ".envrc." };
  static const char *const plain[]
      = { "git",     ".gitignore", ".gitmodules", "vscode", ".envrc.example",
          ".github", "x.git" };
  for (size_t i = 0; i < sizeof git / sizeof *git; i++)
    assert_int_equal (pubguard_classify (git[i]), PUBGUARD_GIT);
  for (size_t i = 0; i < sizeof agent / sizeof *agent; i++)
    assert_int_equal (pubguard_classify (agent[i]), PUBGUARD_AGENT);
  for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
    assert_int_equal (pubguard_classify (plain[i]), PUBGUARD_PLAIN);
  assert_true (pubguard_hook_sample ("pre-commit.sample"));
  assert_false (pubguard_hook_sample ("pre-commit"));
  assert_false (pubguard_hook_sample (".sample"));
}

/* What pubguard_git_config_runs says of text.  */
static char *
runs (const char *text)
{
  return pubguard_git_config_runs (text, strlen (text));
}

static void
test_git_config (void **state)
{
  (void) state;
  static const struct
  {
    const char *text, *key;
  } cases[] = {
    /* What a clone writes names nothing.  */
    { "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
      "\tbare = false\n[remote \"origin\"]\n\turl = /x/src\n"
      "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
      "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
      NULL },
    { "[core]\n\tfsmonitor = /tmp/payload\n", "core.fsmonitor" },
    { "[CORE]\n\tFSMonitor=x\n", "core.fsmonitor" },
    { "[core] hooksPath = h\n", "core.hookspath" },
    { "[core]\n\teditor = \\\n vi\n", "core.editor" },
    { "# c\n; c\n[core]\n\tpager = less # c\n", "core.pager" },
    { "[core]\n\tsshCommand\n", "core.sshcommand" },
    { "[core]\n\tworktree = ../elsewhere\n", "core.worktree" },
    { "[filter \"lfs\"]\n\tsmudge = x\n", "filter.*.smudge" },
    { "[diff \"a b\"]\n\ttextconv = x\n", "diff.*.textconv" },
    { "[diff]\n\texternal = x\n", "diff.external" },
    { "[merge \"m\"]\n\tdriver = x\n", "merge.*.driver" },
    { "[include]\n\tpath = ../../evil\n", "include.path" },
    { "[includeIf \"gitdir:/\"]\n\tpath = x\n", "includeif.*.path" },
    { "[credential]\n\thelper = x\n", "credential.helper" },
    { "[credential \"https://h\"]\n\thelper = x\n", "credential.*.helper" },
    { "[sequence]\n\teditor = x\n", "sequence.editor" },
    { "[gpg]\n\tprogram = x\n", "gpg.program" },
    { "[pager]\n\tlog = x\n", "pager.log" },
    { "[alias]\n\tst = status\n", "alias.st" },
    { "[alias]\n\tst = -c core.fsmonitor=x status\n", "alias.st" },
    { "[alias]\n\tst = !sh -c x\n", "alias.st" },
    { "[alias]\n\tst = \"!sh\"\n", "alias.st" },
    { "[remote \"o\"]\n\tuploadpack = x\n", "remote.*.uploadpack" },
    { "[protocol \"ext\"]\n\tallow = always\n", "protocol.*.allow" },
    { "[submodule \"s\"]\n\tupdate = !x\n", "submodule.*.update" },
    { "[submodule \"s\"]\n\tupdate = rebase\n", NULL },
    { "[hook \"h\"]\n\tcommand = x\n", "hook.*.command" },
    { "[uploadpack]\n\tpackObjectsHook = x\n", "uploadpack.packobjectshook" },
    { "[core.x]\n\tfsmonitor = y\n", NULL }, /* core.x.fsmonitor: not git's */
    { "[sendemail]\n\tsmtpServer = /bin/x\n", "sendemail.smtpserver" },
    { "\xef\xbb\xbf[core]\n\tfsmonitor = x\n", "core.fsmonitor" },
    /* What git would not read as written: left out too.  */
    { "fsmonitor = x\n", "" },
    { "[core\n\tfsmonitor = x\n", "" },
    { "[core]\n\tfsmonitor = \"x\n", "" },
    { "[core]\n\tbad\\q = x\n", "" },
    { "[core]\n\tname = a\\q\n", "" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *got = runs (cases[i].text);
      if (cases[i].key == NULL && got != NULL)
        fail_msg ("case %zu: '%s' named", i, got);
      if (cases[i].key != NULL
          && (got == NULL || strcmp (got, cases[i].key) != 0))
        fail_msg ("case %zu: '%s', not '%s'", i, got ? got : "(none)",
                  cases[i].key);
      free (got);
    }
}

/* (4a) .git -> .realgit: the target is a git directory by its shape.  */
static void
test_symlinked_git (void **state)
{
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  gitdir (s.root, ".realgit");
  dir (s.root, ".realgit/hooks");
  dir (s.root, "plain/hooks");
  put (s.upper, ".realgit/hooks/pre-commit", "#!/bin/sh\n");
  put (s.upper, "plain/hooks/pre-commit", "#!/bin/sh\n");
  scan (&s, NULL, 0, &plan);
  assert_false (planned (&plan, ".realgit/hooks/pre-commit"));
  assert_true (
      left_out (&plan, ".realgit (under .realgit, which is a git directory)"));
  assert_true (planned (&plan, "plain/hooks/pre-commit"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* (4b) an existing nested .git, rewritten: refused whole.  */
static void
test_nested_gitdir (void **state)
{
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  gitdir (s.root, "sub/.git");
  put (s.root, "sub/file", "x\n");
  put (s.upper, "sub/.git/config", "[core]\n\tfsmonitor = x\n");
  put (s.upper, "sub/file", "y\n");
  scan (&s, NULL, 0, &plan);
  assert_true (
      left_out (&plan, "sub/.git (under sub/.git, which is protected)"));
  assert_false (planned (&plan, "sub/.git/config"));
  assert_true (planned (&plan, "sub/file"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* A new repository: its worktree, HEAD and samples publish; a hook, a
 * config naming a program and a commondir do not.  */
static void
test_new_repository (void **state)
{
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  put (s.templates, "pre-commit.sample", "git's own\n");
  gitdir (s.upper, "clone/.git");
  put (s.upper, "clone/file", "hello\n");
  put (s.upper, "clone/.git/hooks/pre-commit.sample", "git's own\n");
  put (s.upper, "clone/.git/hooks/pre-push.sample", "not git's\n");
  put (s.upper, "clone/.git/hooks/post-checkout", "#!/bin/sh\n");
  put (s.upper, "clone/.git/config", "[core]\n\tfsmonitor = x\n");
  put (s.upper, "clone/.git/commondir", "../../evil\n");
  /* A bare repository made by hand, and a submodule's directory.  */
  gitdir (s.upper, "bare");
  put (s.upper, "bare/config", "[alias]\n\tx = !sh\n");
  gitdir (s.upper, "clone/.git/modules/m");
  put (s.upper, "clone/.git/modules/m/hooks/pre-commit", "#!/bin/sh\n");
  put (s.upper, "clone2/.git/config", "[core]\n\tbare = false\n");
  gitdir (s.upper, "clone2/.git");
  scan (&s, NULL, 0, &plan);
  assert_true (planned (&plan, "clone/file"));
  assert_true (planned (&plan, "clone/.git/HEAD"));
  assert_true (planned (&plan, "clone/.git/hooks"));
  assert_true (planned (&plan, "clone/.git/hooks/pre-commit.sample"));
  assert_true (
      left_out (&plan, "clone/.git/hooks/pre-push.sample (a git hook)"));
  assert_true (left_out (&plan, "clone/.git/hooks/post-checkout (a git hook)"));
  assert_true (left_out (&plan, "clone/.git/config (a git configuration "
                                "naming a program: core.fsmonitor)"));
  assert_true (left_out (&plan, "clone/.git/commondir (a git commondir file)"));
  assert_true (left_out (
      &plan, "bare/config (a git configuration naming a program: alias.x)"));
  assert_true (planned (&plan, "bare/HEAD"));
  assert_true (
      left_out (&plan, "clone/.git/modules/m/hooks/pre-commit (a git hook)"));
  assert_true (planned (&plan, "clone2/.git/config"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* A .git that is a file, a symlink, or new in an existing directory, and
 * an existing directory turned into a git directory: refused.  */
static void
test_git_entries (void **state)
{
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  dir (s.root, "old");
  dir (s.root, "was");
  put (s.upper, "new/.git", "gitdir: ../bare\n");
  put (s.upper, "new/x", "x\n");
  dir (s.upper, "new3");
  char *link = xasprintf ("%s/new3/.GIT", s.upper);
  assert_int_equal (symlink ("../bare", link), 0);
  free (link);
  gitdir (s.upper, "old/.git");
  gitdir (s.upper, "was");
  put (s.upper, "was/config", "[core]\n");
  scan (&s, NULL, 0, &plan);
  assert_true (
      left_out (&plan, "new/.git (under new/.git, which is protected)"));
  assert_true (planned (&plan, "new/x"));
  assert_true (
      left_out (&plan, "new3/.GIT (under new3/.GIT, which is protected)"));
  assert_true (
      left_out (&plan, "old/.git (under old/.git, which is protected)"));
  assert_true (left_out (&plan, "was (under was, which is a git directory)"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* Agent configuration at any depth; its control under another name.  */
static void
test_agent_names (void **state)
{
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  put (s.upper, ".vscode/tasks.json", "{}\n");
  put (s.upper, "deep/er/.envrc", "x\n");
  put (s.upper, "deep/.Claude/settings.json", "{}\n");
  put (s.upper, "deep/vscode/tasks.json", "{}\n");
  scan (&s, NULL, 0, &plan);
  assert_true (left_out (&plan, ".vscode (under .vscode, which is protected)"));
  assert_true (left_out (
      &plan, "deep/er/.envrc (under deep/er/.envrc, which is protected)"));
  assert_true (left_out (
      &plan, "deep/.Claude (under deep/.Claude, which is protected)"));
  assert_true (planned (&plan, "deep/vscode/tasks.json"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* (5) configured roots: nothing under them publishes, the rest does.  */
static void
test_configured_roots (void **state)
{
  static const struct pubguard_root roots[]
      = { { "ro", "read-only" }, { "secret.txt", "protected" } };
  struct scratch s;
  struct pubplan plan;
  (void) state;
  scratch_make (&s);
  put (s.root, "ro/f", "original\n");
  put (s.root, "secret.txt", "original\n");
  put (s.upper, "ro/f", "changed\n");
  put (s.upper, "ro/g", "new\n");
  put (s.upper, "secret.txt", "changed\n");
  put (s.upper, "free.txt", "changed\n");
  put (s.upper, "rox/f", "changed\n");
  scan (&s, roots, 2, &plan);
  assert_true (left_out (&plan, "ro (under ro, which is read-only)"));
  assert_true (
      left_out (&plan, "secret.txt (under secret.txt, which is protected)"));
  assert_false (planned (&plan, "ro/g"));
  assert_true (planned (&plan, "free.txt"));
  assert_true (planned (&plan, "rox/f"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

/* Removing a directory that holds a .git, a git directory or a
 * configured root is refused; removing one that holds none is not.
 * Whiteouts need mknod: root only.  */
static void
test_removal (void **state)
{
  static const struct pubguard_root roots[] = { { "keep/ro", "read-only" } };
  struct scratch s;
  struct pubplan plan;
  (void) state;
  if (geteuid () != 0)
    {
      skip ();
      return;
    }
  scratch_make (&s);
  gitdir (s.root, "repo/.git");
  gitdir (s.root, "lib/bare");
  put (s.root, "keep/ro/f", "x\n");
  put (s.root, "plain/f", "x\n");
  put (s.root, "ide/.vscode/f", "x\n");
  static const char *const gone[] = { "repo", "lib", "keep", "plain", "ide" };
  for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
    {
      char *p = xasprintf ("%s/%s", s.upper, gone[i]);
      assert_int_equal (mknod (p, S_IFCHR | 0000, makedev (0, 0)), 0);
      free (p);
    }
  scan (&s, roots, 1, &plan);
  assert_true (
      left_out (&plan, "repo (it holds repo/.git, which is protected)"));
  assert_true (left_out (&plan, "lib (it holds lib/bare, which is protected)"));
  assert_true (left_out (&plan, "keep (it holds keep/ro, which is protected)"));
  assert_true (planned (&plan, "plain"));
  assert_true (planned (&plan, "ide"));
  pubplan_clear (&plan);
  scratch_free (&s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_classify),
    cmocka_unit_test (test_git_config),
    cmocka_unit_test (test_symlinked_git),
    cmocka_unit_test (test_nested_gitdir),
    cmocka_unit_test (test_new_repository),
    cmocka_unit_test (test_git_entries),
    cmocka_unit_test (test_agent_names),
    cmocka_unit_test (test_configured_roots),
    cmocka_unit_test (test_removal),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
