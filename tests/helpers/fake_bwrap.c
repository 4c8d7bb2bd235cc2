/* fake_bwrap: stands in for bwrap in the tests of how the backend treats
 * a bwrap that is trusted (installed root-owned by the test) but misbehaves.
 * What it does is read from the file "mode" beside it:
 *
 *   no-options  answers --help without the options the launch uses (its
 *               probe fails), and runs /usr/bin/bwrap for anything else
 *   refuse      refuses every launch (an argument list holding
 *               "--status-fd") with a bwrap-like message and status 1, and
 *               runs /usr/bin/bwrap for the probes
 *
 * libc only; its environment is bwrap's (empty).  */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  char self[PATH_MAX], mode[64] = "";
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 16);
  char *empty[] = { NULL };
  FILE *f;

  if (n <= 0)
    return 2;
  self[n] = '\0';
  char *slash = strrchr (self, '/');
  if (slash == NULL)
    return 2;
  snprintf (slash + 1, sizeof self - (size_t) (slash + 1 - self), "mode");
  f = fopen (self, "r");
  if (f != NULL)
    {
      if (fgets (mode, sizeof mode, f) == NULL)
        mode[0] = '\0';
      fclose (f);
    }
  mode[strcspn (mode, "\n")] = '\0';
  if (strcmp (mode, "no-options") == 0 && argc == 2
      && strcmp (argv[1], "--help") == 0)
    {
      puts ("usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n"
            "    --help                       Print this help");
      return 0;
    }
  if (strcmp (mode, "refuse") == 0)
    for (int i = 1; i < argc; i++)
      if (strcmp (argv[i], "--status-fd") == 0)
        {
          fputs ("bwrap: Can't mount tmpfs on /newroot/tmp: fake refusal\n",
                 stderr);
          return 1;
        }
  execve ("/usr/bin/bwrap", argv, empty);
  perror ("fake_bwrap: /usr/bin/bwrap");
  return 127;
}
