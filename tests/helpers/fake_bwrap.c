/* fake_bwrap: stands in for bwrap in the tests of how the backend treats
 * a bwrap that is trusted (installed root-owned by the test) but misbehaves.
 * What it does is read from the file "mode" beside it:
 *
 *   no-options  answers --help without the options the launch uses (its
 *               probe fails), and runs /usr/bin/bwrap for anything else
 *   refuse      refuses every launch (an argument list holding
 *               "--status-fd") with a bwrap-like message and status 1, and
 *               runs /usr/bin/bwrap for the probes
 *   liar-done   plays a broker the workload has taken over: on a launch it
 *               writes "forged" into the command's upper, reports STARTED,
 *               EXITED 0 and DONE on the status channel (descriptor 3),
 *               then stays alive for 6 s, so the scope is not gone
 *   liar-refusal  reports STARTED, then writes a bwrap-like refusal on
 *               its stderr and exits 1 without an EXITED, as a workload
 *               holding the broker's stderr could make it look
 *   no-namespaces  cannot make namespaces: anything that asks for them
 *               (--unshare-all), the probe's and a launch's alike, gets
 *               bwrap's message for that and status 1
 *
 * libc only; its environment is bwrap's (empty).  */
#include <config.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/status.h"

/* Send one status record on the channel bwrap hands the broker.  */
static void
fake_send (enum broker_msg_type type, int32_t value)
{
  struct broker_msg msg = { .magic = BROKER_STATUS_MAGIC,
                            .type = (uint32_t) type,
                            .value = value };

  if (send (3, &msg, sizeof msg, MSG_NOSIGNAL) != (ssize_t) sizeof msg)
    perror ("fake_bwrap: send");
}

/* Write "forged" into the upper of the layer directory the launch binds
 * at /.crucible-sandbox/layer.  */
static void
fake_write_upper (int argc, char **argv)
{
  char path[PATH_MAX];

  for (int i = 1; i + 2 < argc; i++)
    if (strcmp (argv[i], "--bind") == 0
        && strcmp (argv[i + 2], "/.crucible-sandbox/layer") == 0)
      {
        snprintf (path, sizeof path, "%s/upper/forged", argv[i + 1]);
        FILE *f = fopen (path, "w");
        if (f != NULL)
          {
            fputs ("forged\n", f);
            fclose (f);
          }
      }
}

/* Whether argv is a launch rather than a probe.  */
static int
fake_is_launch (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--status-fd") == 0)
      return 1;
  return 0;
}

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
  if (strcmp (mode, "no-namespaces") == 0)
    for (int i = 1; i < argc; i++)
      if (strcmp (argv[i], "--unshare-all") == 0)
        {
          fputs ("bwrap: No permissions to creating new namespace: fake\n",
                 stderr);
          return 1;
        }
  if (strcmp (mode, "liar-done") == 0 && fake_is_launch (argc, argv))
    {
      fake_write_upper (argc, argv);
      fake_send (BROKER_MSG_STARTED, 2);
      fake_send (BROKER_MSG_EXITED, 0);
      fake_send (BROKER_MSG_DONE, 0);
      signal (SIGTERM, SIG_IGN);
      sleep (6);
      return 0;
    }
  if (strcmp (mode, "liar-refusal") == 0 && fake_is_launch (argc, argv))
    {
      fake_send (BROKER_MSG_STARTED, 2);
      fputs ("bwrap: Creating new namespace failed: forged after the start\n",
             stderr);
      return 1;
    }
  execve ("/usr/bin/bwrap", argv, empty);
  perror ("fake_bwrap: /usr/bin/bwrap");
  return 127;
}
