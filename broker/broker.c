/* crucible-sandbox-broker: the keeper of one command's process scope.  It
 * runs as PID 1 of a Linux sandbox (or, for tests, as an ordinary child
 * subreaper), starts the workload, reaps everything the workload leaves,
 * and reports on the status channel that broker/status.h describes.  libc
 * only: nothing here is shared with the host but that header and
 * broker/unreadable.c, the pattern grammar the host checks with too.  */
#include <config.h>

/* pipe2, __WALL, SYS_close_range: configure's AC_USE_SYSTEM_EXTENSIONS
 * defines this; a build without config.h's help still needs it.  */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/status.h"
#include "broker/unreadable.h"

#ifndef SECBIT_NOROOT
#include <linux/securebits.h>
#endif

/* mount_setattr's flag for a whole subtree (linux/fcntl.h, not glibc's).  */
#ifndef AT_RECURSIVE
#define BROKER_AT_RECURSIVE 0x8000
#else
#define BROKER_AT_RECURSIVE AT_RECURSIVE
#endif

#define BROKER_NAME "crucible-sandbox-broker"
#define BROKER_USAGE                                                           \
  "usage: " BROKER_NAME " --status-fd N [--env-fd N] [--output-fd N]\n"        \
  "         [--seccomp-fd N] [--net-fd N [--port N]...] [--cwd DIR]\n"         \
  "         [--confine [--lower DIR --upper DIR --work DIR --root DIR]\n"      \
  "          [--protect RELPATH]... [--hide DIR]...\n"                         \
  "          [--unreadable PATTERN]... [--hide-sockets [--socket "             \
  "RELPATH]...]]\n"                                                            \
  "         [--cpu-seconds N] [--open-files N] [--processes N]\n"              \
  "         [--address-space BYTES] [--await]\n"                               \
  "         -- PROGRAM [ARG...]\n"

/* The broker's own exit statuses.  125 follows env(1) and chroot(1): the
 * command never ran because the broker itself could not start it.  */
#define BROKER_EXIT_DONE 0
#define BROKER_EXIT_STUCK 1
#define BROKER_EXIT_FAILED 125
#define BROKER_EXIT_EXEC 127

#define BROKER_GRACE_MS 1000 /* a signal other than SIGKILL, before SIGKILL */
#define BROKER_KILL_MS 5000  /* SIGKILL rounds, before giving up */
#define BROKER_TICK_MS 10

/* --protect names: .git and the agent names, a gitdir target, and every
 * configured readOnly and protected root (256 each) by its spelling and
 * by where it resolves.  */
#define BROKER_MAX_PROTECT 1040
#define BROKER_MAX_HIDE 8           /* --hide paths */
#define BROKER_MAX_SOCKETS 64       /* --socket names */
#define BROKER_MAX_ENV_BYTES 262144 /* the --env-fd block, NULs included */
#define BROKER_MAX_ENV_VARS 1024
/* --await: the arguments the host's GO adds after PROGRAM [ARG...]: the
 * command line given to sh -c (at most MAX_ARG_STRLEN) with room over.  */
#define BROKER_MAX_GO_ARGS_BYTES 262144
#define BROKER_MAX_GO_ARGS 64
/* The workload's filter: the kernel's own bound on a classic BPF program.  */
#define BROKER_MAX_FILTER_BYTES (BPF_MAXINSNS * sizeof (struct sock_filter))

/* The limits the command line may set: none by default.  */
struct broker_limits
{
  unsigned long cpu_seconds;   /* RLIMIT_CPU, 0 for unset */
  unsigned long open_files;    /* RLIMIT_NOFILE */
  unsigned long processes;     /* RLIMIT_NPROC */
  unsigned long address_space; /* RLIMIT_AS, bytes */
};

struct broker_options
{
  int status_fd;   /* the keeper's end of the status channel */
  int env_fd;      /* the workload's environment, or -1 for the broker's */
  int output_fd;   /* the workload's stdout and stderr, or -1 for 1 and 2 */
  int seccomp_fd;  /* the workload's seccomp filter as BPF, or -1 */
  int net_fd;      /* the net channel (status.h), or -1: no listeners */
  const char *cwd; /* absolute, or NULL to stay where started */
  bool confine;    /* own mount namespace, projection, capabilities dropped */
  const char *lower, *upper, *work, *root; /* the overlay, all or none */
  const char *protect[BROKER_MAX_PROTECT]; /* names under root, read-only */
  int n_protect;
  const char *hide[BROKER_MAX_HIDE]; /* covered with an empty tmpfs */
  int n_hide;
  const char *unreadable[UNREADABLE_MAX_PATTERNS]; /* patterns under root */
  int n_unreadable;
  bool hide_sockets; /* cover every socket under root not named below */
  const char *sockets[BROKER_MAX_SOCKETS]; /* names under root, kept */
  int n_sockets;
  struct broker_limits limits;
  /* --port: sandbox.network.ports */
  uint16_t ports[BROKER_NET_MAX_PORTS];
  int n_ports;
  /* --await: set up what does not depend on the command, then wait on the
   * status channel for the host's GO (status.h) with the command's
   * output, environment and last arguments.  */
  bool await;
  char **argv; /* PROGRAM (absolute) and its arguments, NULL-terminated */
  /* From a GO with five descriptors (status.h): the workload's own stdin
   * and stderr, output_fd then its stdout alone; -1 otherwise.  */
  int input_fd, error_fd;
};

struct broker
{
  struct broker_options opt;
  char *env_block; /* what --env-fd held; envp points into it */
  char *go_args;   /* --await: what GO's arguments held; argv points in */
  char **envp;     /* the workload's environment, or NULL for environ */
  struct sock_filter *filter; /* what --seccomp-fd held, or NULL */
  size_t filter_len;          /* in instructions */
  int signal_fd;              /* SIGCHLD and the stop signals */
  pid_t workload;             /* also its process group id */
  bool workload_reaped;       /* its status has been collected (and reported) */
  int listen_fd[2];           /* 127.0.0.1 and [::1]:BROKER_NET_PORT, or -1 */
  int pending_fd;             /* accepted, not yet sent on the net channel */
  /* Per --port: whether the workload listens on it (last said to the
   * host), and the broker's own listeners when the host forwards it.  */
  bool port_up[BROKER_NET_MAX_PORTS];
  int fwd_fd[BROKER_NET_MAX_PORTS][2];
};

enum broker_scope
{
  BROKER_SCOPE_LIVE,
  BROKER_SCOPE_EMPTY
};

/* One step of getting the broker ready; returns -1 with errno set.  */
struct broker_step
{
  const char *what;
  int (*run) (struct broker *b);
};

/* Complain about the command line on stderr; always returns -1.  */
static int __attribute__ ((format (printf, 1, 2)))
broker_usage_error (const char *fmt, ...)
{
  va_list ap;

  fputs (BROKER_NAME ": ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputs ("\n" BROKER_USAGE, stderr);
  return -1;
}

/* Read a descriptor number: decimal digits only, no sign, no overflow.  */
static int
broker_parse_fd (const char *text, int *fd)
{
  long value = 0;

  if (*text == '\0')
    return -1;
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p < '0' || *p > '9')
        return -1;
      value = value * 10 + (*p - '0');
      if (value > 1048576) /* far above any fs.nr_open */
        return -1;
    }
  *fd = (int) value;
  return 0;
}

/* Take the value of option argv[*i] into *slot, once.  */
static int
broker_take_value (int argc, char **argv, int *i, const char **slot)
{
  const char *name = argv[*i];

  if (*slot != NULL)
    return broker_usage_error ("%s given twice", name);
  if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
    return broker_usage_error ("%s needs a value", name);
  *i += 1;
  *slot = argv[*i];
  return 0;
}

/* Read a positive decimal number no larger than max.  */
static int
broker_parse_count (const char *name, const char *text, unsigned long max,
                    unsigned long *out)
{
  unsigned long value = 0;

  if (text == NULL)
    return 0;
  if (*text == '\0' || *text == '0')
    return broker_usage_error ("%s: '%s' is not a number from 1 to %lu", name,
                               text, max);
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p < '0' || *p > '9' || value > max / 10
          || value * 10 + (unsigned long) (*p - '0') > max)
        return broker_usage_error ("%s: '%s' is not a number from 1 to %lu",
                                   name, text, max);
      value = value * 10 + (unsigned long) (*p - '0');
    }
  *out = value;
  return 0;
}

/* An absolute path an overlay option may carry: its option string uses
 * ',' and ':' as separators and '\' as an escape, so none may appear.  */
static int
broker_check_layer (const char *name, const char *path)
{
  if (path[0] != '/')
    return broker_usage_error ("%s must be an absolute path, not '%s'", name,
                               path);
  if (strpbrk (path, ",:\\") != NULL)
    return broker_usage_error ("%s: '%s' holds ',', ':' or '\\'", name, path);
  return 0;
}

/* Whether name is a relative path of plain components: none empty, "."
 * or "..", so root/name cannot step out of the root or name it whole.  */
static bool
broker_plain_relative (const char *name)
{
  const char *c = name;

  for (;;)
    {
      size_t len = strcspn (c, "/");
      if (len == 0 || (len == 1 && c[0] == '.')
          || (len == 2 && c[0] == '.' && c[1] == '.'))
        return false;
      if (c[len] == '\0')
        return true;
      c += len + 1;
    }
}

/* Check what is to be covered: patterns in the grammar, plain socket
 * names, and the overlay and a --hide directory to work in (the empty
 * file and directory the covers are bound from live on a tmpfs mounted
 * there first, then hidden with the rest).  */
static int
broker_check_cover (const struct broker_options *opt)
{
  if (!opt->confine && opt->hide_sockets)
    return broker_usage_error ("--hide-sockets needs --confine");
  if (opt->n_sockets > 0 && !opt->hide_sockets)
    return broker_usage_error ("--socket needs --hide-sockets");
  if ((opt->n_unreadable > 0 || opt->hide_sockets)
      && (opt->root == NULL || opt->n_hide == 0))
    return broker_usage_error ("--unreadable and --hide-sockets need the "
                               "overlay (--root) and a --hide directory");
  for (int i = 0; i < opt->n_unreadable; i++)
    {
      const char *why = unreadable_check (opt->unreadable[i]);
      if (why != NULL)
        return broker_usage_error ("--unreadable: '%s' %s", opt->unreadable[i],
                                   why);
    }
  for (int i = 0; i < opt->n_sockets; i++)
    if (!broker_plain_relative (opt->sockets[i]))
      return broker_usage_error ("--socket: '%s' is not a plain relative "
                                 "path",
                                 opt->sockets[i]);
  return 0;
}

/* Check the confinement options: the overlay is all four paths or none,
 * and each protected name is plain components under the root.  */
static int
broker_check_confine (struct broker_options *opt)
{
  const char *layer[4] = { opt->lower, opt->upper, opt->work, opt->root };
  const char *names[4] = { "--lower", "--upper", "--work", "--root" };
  int given = 0;

  for (int i = 0; i < 4; i++)
    given += layer[i] != NULL;
  if (!opt->confine
      && (given > 0 || opt->n_protect > 0 || opt->n_hide > 0
          || opt->n_unreadable > 0))
    return broker_usage_error ("--lower, --upper, --work, --root, --protect, "
                               "--hide and --unreadable need --confine");
  if (given != 0 && given != 4)
    return broker_usage_error (
        "--lower, --upper, --work and --root go together");
  for (int i = 0; i < given; i++)
    if (broker_check_layer (names[i], layer[i]) < 0)
      return -1;
  if (opt->n_protect > 0 && opt->root == NULL)
    return broker_usage_error ("--protect needs the overlay (--root)");
  for (int i = 0; i < opt->n_protect; i++)
    if (!broker_plain_relative (opt->protect[i]))
      return broker_usage_error ("--protect: '%s' is not a plain relative "
                                 "path",
                                 opt->protect[i]);
  for (int i = 0; i < opt->n_hide; i++)
    if (opt->hide[i][0] != '/')
      return broker_usage_error ("--hide must be an absolute path, not '%s'",
                                 opt->hide[i]);
  return broker_check_cover (opt);
}

/* The text values of the options, before they are checked.  */
struct broker_args
{
  const char *status_fd, *env_fd, *output_fd, *cpu, *files, *procs, *as;
  const char *seccomp_fd, *net_fd;
  const char *ports[BROKER_NET_MAX_PORTS];
  int n_ports;
};

/* Check --seccomp-fd: a descriptor of 3 or above, none of the others.  */
static int
broker_check_seccomp_fd (const struct broker_args *a,
                         struct broker_options *opt)
{
  if (a->seccomp_fd == NULL)
    return 0;
  if (broker_parse_fd (a->seccomp_fd, &opt->seccomp_fd) < 0
      || opt->seccomp_fd < 3 || opt->seccomp_fd == opt->status_fd
      || opt->seccomp_fd == opt->env_fd || opt->seccomp_fd == opt->output_fd)
    return broker_usage_error ("--seccomp-fd: '%s' is not a descriptor "
                               "number of 3 or above, apart from the others",
                               a->seccomp_fd);
  return 0;
}

/* Check --net-fd: a descriptor of 3 or above, none of the others.  */
static int
broker_check_net_fd (const struct broker_args *a, struct broker_options *opt)
{
  if (a->net_fd == NULL)
    return 0;
  /* Outside a sandbox's own network namespace the listeners would be on
   * the host's loopback, for anyone there to reach.  */
  if (!opt->confine)
    return broker_usage_error ("--net-fd needs --confine");
  if (broker_parse_fd (a->net_fd, &opt->net_fd) < 0 || opt->net_fd < 3
      || opt->net_fd == opt->status_fd || opt->net_fd == opt->env_fd
      || opt->net_fd == opt->output_fd || opt->net_fd == opt->seccomp_fd)
    return broker_usage_error ("--net-fd: '%s' is not a descriptor number of "
                               "3 or above, apart from the others",
                               a->net_fd);
  return 0;
}

/* Check --port: each a port of 1024 and above, only with --net-fd (the
 * host learns of it and reaches it over the channel alone).  */
static int
broker_check_ports (const struct broker_args *a, struct broker_options *opt)
{
  if (a->n_ports > 0 && a->net_fd == NULL)
    return broker_usage_error ("--port needs --net-fd");
  for (int i = 0; i < a->n_ports; i++)
    {
      char *end = NULL;
      errno = 0;
      unsigned long v = strtoul (a->ports[i], &end, 10);
      if (a->ports[i][0] < '0' || a->ports[i][0] > '9' || *end != '\0'
          || errno != 0 || v < 1024 || v > 65535 || v == BROKER_NET_PORT)
        return broker_usage_error ("--port: '%s' is not a port from 1024 to "
                                   "65535 other than %d",
                                   a->ports[i], BROKER_NET_PORT);
      opt->ports[opt->n_ports++] = (uint16_t) v;
    }
  return 0;
}

/* Check the parsed values themselves.  */
static int
broker_check_values (const struct broker_args *a, struct broker_options *opt)
{
  if (a->status_fd == NULL)
    return broker_usage_error ("--status-fd is required");
  if (broker_parse_fd (a->status_fd, &opt->status_fd) < 0)
    return broker_usage_error ("--status-fd: '%s' is not a descriptor number",
                               a->status_fd);
  /* 0, 1 and 2 are the workload's streams: a channel there would be
   * inherited as its stdin or stdout.  */
  if (opt->status_fd < 3)
    return broker_usage_error ("--status-fd must be 3 or above, not %d",
                               opt->status_fd);
  if (a->env_fd != NULL
      && (broker_parse_fd (a->env_fd, &opt->env_fd) < 0 || opt->env_fd < 3
          || opt->env_fd == opt->status_fd))
    return broker_usage_error ("--env-fd: '%s' is not a descriptor number of "
                               "3 or above, apart from --status-fd",
                               a->env_fd);
  if (a->output_fd != NULL
      && (broker_parse_fd (a->output_fd, &opt->output_fd) < 0
          || opt->output_fd < 3 || opt->output_fd == opt->status_fd
          || opt->output_fd == opt->env_fd))
    return broker_usage_error ("--output-fd: '%s' is not a descriptor number "
                               "of 3 or above, apart from the others",
                               a->output_fd);
  if (broker_check_seccomp_fd (a, opt) < 0 || broker_check_net_fd (a, opt) < 0
      || broker_check_ports (a, opt) < 0)
    return -1;
  /* No search path: inside a sandbox, PATH could find a binary the
   * workspace planted.  The host resolves the program.  */
  if (opt->argv[0][0] != '/')
    return broker_usage_error ("the program must be an absolute path, not '%s'",
                               opt->argv[0]);
  if (opt->cwd != NULL && opt->cwd[0] != '/')
    return broker_usage_error ("--cwd must be an absolute path, not '%s'",
                               opt->cwd);
  /* With --await the command's own descriptors come with GO, never
   * beside it.  */
  if (opt->await && (opt->env_fd >= 0 || opt->output_fd >= 0))
    return broker_usage_error ("--await takes no --env-fd or --output-fd");
  if (broker_parse_count ("--cpu-seconds", a->cpu, 1000000000UL,
                          &opt->limits.cpu_seconds)
          < 0
      || broker_parse_count ("--open-files", a->files, 1048576UL,
                             &opt->limits.open_files)
             < 0
      || broker_parse_count ("--processes", a->procs, 4194304UL,
                             &opt->limits.processes)
             < 0
      || broker_parse_count ("--address-space", a->as, 1UL << 50,
                             &opt->limits.address_space)
             < 0)
    return -1;
  return broker_check_confine (opt);
}

/* Take one more value of a repeatable option into list.  */
static int
broker_take_repeat (int argc, char **argv, int *i, const char **list, int *n,
                    int max)
{
  const char *value = NULL;

  if (*n >= max)
    return broker_usage_error ("%s given more than %d times", argv[*i], max);
  if (broker_take_value (argc, argv, i, &value) < 0)
    return -1;
  list[(*n)++] = value;
  return 0;
}

/* Parse one option at argv[*i].  */
static int
broker_parse_option (int argc, char **argv, int *i, struct broker_args *a,
                     struct broker_options *opt)
{
  const struct
  {
    const char *name;
    const char **slot;
  } single[] = {
    { "--status-fd", &a->status_fd },   { "--env-fd", &a->env_fd },
    { "--output-fd", &a->output_fd },   { "--cwd", &opt->cwd },
    { "--seccomp-fd", &a->seccomp_fd }, { "--lower", &opt->lower },
    { "--upper", &opt->upper },         { "--work", &opt->work },
    { "--root", &opt->root },           { "--cpu-seconds", &a->cpu },
    { "--open-files", &a->files },      { "--processes", &a->procs },
    { "--address-space", &a->as },      { "--net-fd", &a->net_fd },
  };
  const char *arg = argv[*i];

  for (size_t k = 0; k < sizeof single / sizeof single[0]; k++)
    if (strcmp (arg, single[k].name) == 0)
      return broker_take_value (argc, argv, i, single[k].slot);
  if (strcmp (arg, "--protect") == 0)
    return broker_take_repeat (argc, argv, i, opt->protect, &opt->n_protect,
                               BROKER_MAX_PROTECT);
  if (strcmp (arg, "--hide") == 0)
    return broker_take_repeat (argc, argv, i, opt->hide, &opt->n_hide,
                               BROKER_MAX_HIDE);
  if (strcmp (arg, "--unreadable") == 0)
    return broker_take_repeat (argc, argv, i, opt->unreadable,
                               &opt->n_unreadable, UNREADABLE_MAX_PATTERNS);
  if (strcmp (arg, "--socket") == 0)
    return broker_take_repeat (argc, argv, i, opt->sockets, &opt->n_sockets,
                               BROKER_MAX_SOCKETS);
  if (strcmp (arg, "--port") == 0)
    return broker_take_repeat (argc, argv, i, a->ports, &a->n_ports,
                               BROKER_NET_MAX_PORTS);
  if (strcmp (arg, "--hide-sockets") == 0)
    {
      if (opt->hide_sockets)
        return broker_usage_error ("--hide-sockets given twice");
      opt->hide_sockets = true;
      return 0;
    }
  if (strcmp (arg, "--await") == 0)
    {
      if (opt->await)
        return broker_usage_error ("--await given twice");
      opt->await = true;
      return 0;
    }
  if (strcmp (arg, "--confine") == 0)
    {
      if (opt->confine)
        return broker_usage_error ("--confine given twice");
      opt->confine = true;
      return 0;
    }
  if (arg[0] != '-')
    return broker_usage_error ("unexpected '%s': the program goes after '--'",
                               arg);
  return broker_usage_error ("unknown option '%s'", arg);
}

/* Parse the command line strictly; nothing but the documented form.  */
static int
broker_parse_args (int argc, char **argv, struct broker_options *opt)
{
  struct broker_args a = { 0 };
  int i;

  memset (opt, 0, sizeof *opt);
  opt->env_fd = -1;
  opt->output_fd = -1;
  opt->input_fd = -1;
  opt->error_fd = -1;
  opt->seccomp_fd = -1;
  opt->net_fd = -1;
  for (i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (broker_parse_option (argc, argv, &i, &a, opt) < 0)
      return -1;
  if (i >= argc)
    return broker_usage_error ("missing '--' before the program");
  if (i + 1 >= argc)
    return broker_usage_error ("no program after '--'");
  opt->argv = argv + i + 1;
  return broker_check_values (&a, opt);
}

/* Check the descriptors the host must have given: the workload's three
 * streams and a SOCK_SEQPACKET Unix socket as the channel.  A closed 0-2
 * would otherwise be filled by the next descriptor the broker opens, and
 * the workload would write its output into that.  */
static int
broker_check_fds (const struct broker_options *opt)
{
  int type = 0, domain = 0;
  socklen_t len = sizeof type;

  for (int fd = 0; fd <= 2; fd++)
    if (fcntl (fd, F_GETFD) < 0)
      return broker_usage_error ("descriptor %d is not open", fd);
  if (fcntl (opt->status_fd, F_GETFD) < 0)
    return broker_usage_error ("--status-fd %d: %s", opt->status_fd,
                               strerror (errno));
  if (getsockopt (opt->status_fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0
      || (len = sizeof domain,
          getsockopt (opt->status_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
             < 0
      || type != SOCK_SEQPACKET || domain != AF_UNIX)
    return broker_usage_error ("--status-fd %d is not a Unix SOCK_SEQPACKET "
                               "socket",
                               opt->status_fd);
  type = domain = 0;
  len = sizeof type;
  if (opt->net_fd >= 0
      && (getsockopt (opt->net_fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0
          || (len = sizeof domain,
              getsockopt (opt->net_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
                 < 0
          || type != SOCK_SEQPACKET || domain != AF_UNIX))
    return broker_usage_error ("--net-fd %d is not a Unix SOCK_SEQPACKET "
                               "socket",
                               opt->net_fd);
  if (opt->env_fd >= 0 && fcntl (opt->env_fd, F_GETFD) < 0)
    return broker_usage_error ("--env-fd %d: %s", opt->env_fd,
                               strerror (errno));
  if (opt->output_fd >= 0 && fcntl (opt->output_fd, F_GETFD) < 0)
    return broker_usage_error ("--output-fd %d: %s", opt->output_fd,
                               strerror (errno));
  return 0;
}

/* Send one record; false when the host is gone, which only means nobody
 * is listening any more.  Never raises SIGPIPE.  */
static bool
broker_send (int fd, enum broker_msg_type type, int32_t value,
             enum broker_stage stage)
{
  struct broker_msg msg = { .magic = BROKER_STATUS_MAGIC,
                            .type = (uint32_t) type,
                            .value = value,
                            .stage = (uint32_t) stage };
  ssize_t n;

  do
    n = send (fd, &msg, sizeof msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t) sizeof msg;
}

/* Sleep for ms milliseconds.  */
static void
broker_sleep_ms (int ms)
{
  struct timespec pause = { ms / 1000, (long) (ms % 1000) * 1000000L };

  while (nanosleep (&pause, &pause) < 0 && errno == EINTR)
    ;
}

/* Close [first, last] by walking /proc/self/fd, for kernels before 5.9
 * (or a seccomp filter) that refuse close_range.  */
static int
broker_close_walk (unsigned int first, unsigned int last)
{
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *de;

  if (dir == NULL)
    return -1;
  while ((de = readdir (dir)) != NULL)
    {
      char *end;
      unsigned long fd = strtoul (de->d_name, &end, 10);
      if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end != '\0')
        continue;
      if (fd >= first && fd <= last && (int) fd != dirfd (dir))
        close ((int) fd);
    }
  closedir (dir);
  return 0;
}

/* Close every descriptor in [first, last].  */
static int
broker_close_range (unsigned int first, unsigned int last)
{
  if (first > last)
    return 0;
#ifdef SYS_close_range
  if (syscall (SYS_close_range, first, last, 0) == 0)
    return 0;
#endif
  return broker_close_walk (first, last);
}

/* Close everything but 0-2, the channel, the output descriptor and the
 * net channel: whatever else the host leaked (another command's pipe, a
 * credential file) would reach the workload, and a held write end would
 * keep the host from ever seeing end of output.  */
static int
broker_close_inherited (struct broker *b)
{
  int keep[3] = { b->opt.status_fd, b->opt.output_fd, b->opt.net_fd };
  unsigned int next = 3;

  /* Close the gaps between the kept descriptors, in increasing order.  */
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (keep[j] < keep[i])
        {
          int t = keep[i];
          keep[i] = keep[j];
          keep[j] = t;
        }
  for (int i = 0; i < 3; i++)
    {
      if (keep[i] < 0)
        continue;
      if (broker_close_range (next, (unsigned int) keep[i] - 1) < 0)
        return -1;
      next = (unsigned int) keep[i] + 1;
      /* Kept in the broker, never inherited as such: the workload could
       * forge messages on the channel, would reach the host's proxy
       * without going through the port the broker listens on, and gets
       * the output only as its stdout and stderr.  */
      int flags = fcntl (keep[i], F_GETFD);
      if (flags < 0 || fcntl (keep[i], F_SETFD, flags | FD_CLOEXEC) < 0)
        return -1;
    }
  return broker_close_range (next, ~0U);
}

/* Become the reaper of everything the workload leaves behind: a double fork
 * or setsid must not let a process slip out of the scope to the host's init.
 * As PID 1 this holds anyway; the prctl makes it hold outside a namespace.  */
static int
broker_become_reaper (struct broker *b __attribute__ ((unused)))
{
  return prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* Keep the broker out of the workload's reach for its whole life.  The
 * workload runs with the broker's own uid (host root, when crucible runs
 * as root), so a dumpable broker could be traced, its descriptors taken
 * (/proc/1/fd, pidfd_getfd) and its memory read or written: with the
 * status channel in hand a command could report its own ending, and a
 * traced broker could be held stopped with its parent-death signal
 * cleared, outliving crucible.  Not dumpable, the kernel refuses every
 * ptrace-mode access to it to anything without CAP_SYS_PTRACE, and its
 * /proc entries belong to root.  First, before anything worth taking is
 * open.  A credential change resets the flag to fs.suid_dumpable, so
 * broker_drop_caps sets it again.  The workload gets a dumpable process
 * back from its own execve, so tracing its own children still works.  */
static int
broker_forbid_dump (struct broker *b __attribute__ ((unused)))
{
  return prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* Forbid gaining privileges through exec: a setuid binary reachable in the
 * sandbox must not run with more than the workload has.  Inherited by every
 * descendant and irrevocable.  */
static int
broker_forbid_new_privs (struct broker *b __attribute__ ((unused)))
{
  return prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* Forbid core files, hard limit too so the workload cannot raise it: a dump
 * holds the process's memory (credentials from its environment) and would
 * land in the workspace, where publication could carry it out.  */
static int
broker_forbid_core (struct broker *b __attribute__ ((unused)))
{
  const struct rlimit none = { 0, 0 };

  return setrlimit (RLIMIT_CORE, &none);
}

/* The signals the broker takes through its signalfd.  */
static void
broker_signal_set (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGCHLD);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGHUP);
}

/* Take SIGCHLD and the stop signals through a signalfd.  Blocking them
 * before the fork means no child's end is missed between fork and poll;
 * the workload unblocks them again.  */
static int
broker_watch_signals (struct broker *b)
{
  sigset_t set;

  broker_signal_set (&set);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    return -1;
  b->signal_fd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  return b->signal_fd < 0 ? -1 : 0;
}

/* Enter the working directory, which the workload inherits.  Last on
 * purpose: a directory entered before a mount over it would leave the
 * workload on the covered tree.  */
static int
broker_enter_cwd (struct broker *b)
{
  return b->opt.cwd == NULL ? 0 : chdir (b->opt.cwd);
}

/* Read fd to its end into a new buffer (*buf_out, malloc'd; kept on
 * failure for the caller's exit to drop), at most max bytes: E2BIG past
 * that, rather than a truncated read taken for the whole.  */
static int
broker_read_all (int fd, size_t max, char **buf_out, size_t *len_out)
{
  size_t len = 0;
  ssize_t n;
  char *buf = malloc (max + 1);

  *buf_out = buf;
  if (buf == NULL)
    return -1;
  while ((n = read (fd, buf + len, max + 1 - len)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      len += (size_t) n;
      if (len > max)
        return errno = E2BIG, -1;
    }
  *len_out = len;
  return 0;
}

/* Read the workload's environment from --env-fd: NAME=VALUE strings, each
 * ending in a NUL.  The host passes it this way so that no value is ever
 * in an argument list (bwrap's or the broker's, both readable in /proc by
 * anything of the same user) and bwrap itself runs from an empty one.
 * First, before the sweep closes the descriptor.  */
static int
broker_read_env (struct broker *b)
{
  size_t len, count = 0;

  if (b->opt.env_fd < 0)
    return 0;
  if (broker_read_all (b->opt.env_fd, BROKER_MAX_ENV_BYTES, &b->env_block, &len)
      < 0)
    return -1;
  /* Every entry is a non-empty NAME, '=', a value, and its NUL.  */
  if (len > 0 && b->env_block[len - 1] != '\0')
    return errno = EINVAL, -1;
  for (size_t i = 0; i < len; i += strlen (b->env_block + i) + 1)
    if (b->env_block[i] == '=' || strchr (b->env_block + i, '=') == NULL
        || ++count > BROKER_MAX_ENV_VARS)
      return errno = EINVAL, -1;
  b->envp = calloc (count + 1, sizeof *b->envp);
  if (b->envp == NULL)
    return -1;
  count = 0;
  for (size_t i = 0; i < len; i += strlen (b->env_block + i) + 1)
    b->envp[count++] = b->env_block + i;
  /* Read once: the sweep, or GO's own cleanup, need not find it.  */
  close (b->opt.env_fd);
  b->opt.env_fd = -1;
  return 0;
}

/* The descriptors GO carries, in order: the workload's output, its
 * environment, and the arguments after PROGRAM [ARG...]; for a workload
 * with standard streams of its own, then its stdin and its stderr.  */
enum
{
  BROKER_GO_OUTPUT,
  BROKER_GO_ENV,
  BROKER_GO_ARGS,
  BROKER_GO_FDS_SHARED, /* the first three: output is stdout and stderr */
  BROKER_GO_INPUT = BROKER_GO_FDS_SHARED,
  BROKER_GO_ERROR,
  BROKER_GO_FDS
};

/* Whether a GO carrying k descriptors is whole: three, or all five.  */
static bool
broker_go_count (size_t k)
{
  return k == BROKER_GO_FDS_SHARED || k == BROKER_GO_FDS;
}

/* Receive one record and three or BROKER_GO_FDS descriptors into fds
 * (close-on-exec; the ones that did not come stay -1).  Returns the
 * record's length, 0 when the host closed its end, -1 on error; a record
 * with other descriptors, or a cut one, is EPROTO with whatever came
 * closed.  */
static ssize_t
broker_recv_go (int fd, struct broker_msg *msg, int fds[BROKER_GO_FDS])
{
  union
  {
    char buf[CMSG_SPACE (BROKER_GO_FDS * sizeof (int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = { .iov_base = msg, .iov_len = sizeof *msg };
  struct msghdr mh = { .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf };
  ssize_t n;

  do
    n = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return n;
  struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
  size_t k = c != NULL && c->cmsg_len >= CMSG_LEN (0)
                 ? (c->cmsg_len - CMSG_LEN (0)) / sizeof (int)
                 : 0;
  bool whole
      = c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
        && c->cmsg_len == CMSG_LEN (k * sizeof (int)) && broker_go_count (k)
        && !(mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC));
  if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
    {
      int got[BROKER_GO_FDS] = { -1, -1, -1, -1, -1 };
      memcpy (got, CMSG_DATA (c),
              (k < BROKER_GO_FDS ? k : BROKER_GO_FDS) * sizeof (int));
      for (size_t i = 0; i < BROKER_GO_FDS; i++)
        if (whole)
          fds[i] = got[i];
        else if (i < k)
          close (got[i]);
    }
  if (!whole)
    return errno = EPROTO, -1;
  return n;
}

/* Append GO's arguments (NUL-terminated strings) to PROGRAM [ARG...].  */
static int
broker_go_args (struct broker *b, int fd)
{
  size_t len, n_fixed = 0, n_go = 0;
  int rc = broker_read_all (fd, BROKER_MAX_GO_ARGS_BYTES, &b->go_args, &len);

  close (fd);
  if (rc < 0)
    return -1;
  if (len > 0 && b->go_args[len - 1] != '\0')
    return errno = EINVAL, -1;
  for (size_t i = 0; i < len; i += strlen (b->go_args + i) + 1)
    if (++n_go > BROKER_MAX_GO_ARGS)
      return errno = E2BIG, -1;
  while (b->opt.argv[n_fixed] != NULL)
    n_fixed++;
  char **argv = calloc (n_fixed + n_go + 1, sizeof *argv);
  if (argv == NULL)
    return -1;
  memcpy (argv, b->opt.argv, n_fixed * sizeof *argv);
  for (size_t i = 0, k = n_fixed; i < len; i += strlen (b->go_args + i) + 1)
    argv[k++] = b->go_args + i;
  b->opt.argv = argv;
  return 0;
}

/* With --await: wait for the host's GO.  Everything before this step is
 * the same for any command (the namespaces bwrap made, the broker's own
 * shields, /proc); everything after it reads the workspace (the
 * projection, the protected and unreadable paths, the sockets), so it is
 * done only now, after the host took the command's baseline, and sees
 * the workspace as the command will.  The host closing its end first
 * means the command was not run after all (refused, or crucible left):
 * the broker leaves, having run nothing.  */
static int
broker_await_go (struct broker *b)
{
  struct broker_msg msg;
  int fds[BROKER_GO_FDS] = { -1, -1, -1, -1, -1 };

  if (!b->opt.await)
    return 0;
  ssize_t n = broker_recv_go (b->opt.status_fd, &msg, fds);
  if (n == 0 || (n < 0 && errno == ECONNRESET))
    _exit (BROKER_EXIT_DONE);
  if (n < 0)
    return -1;
  if (n != (ssize_t) sizeof msg || msg.magic != BROKER_STATUS_MAGIC
      || msg.type != BROKER_MSG_GO)
    {
      for (int i = 0; i < BROKER_GO_FDS; i++)
        if (fds[i] >= 0)
          close (fds[i]);
      return errno = EPROTO, -1;
    }
  b->opt.output_fd = fds[BROKER_GO_OUTPUT];
  b->opt.input_fd = fds[BROKER_GO_INPUT];
  b->opt.error_fd = fds[BROKER_GO_ERROR];
  b->opt.env_fd = fds[BROKER_GO_ENV];
  if (broker_read_env (b) < 0)
    {
      close (fds[BROKER_GO_ARGS]);
      return -1;
    }
  return broker_go_args (b, fds[BROKER_GO_ARGS]);
}

/* A mount namespace of the broker's own.  bwrap's belongs to the user
 * namespace bwrap made; --disable-userns then moves the broker into a
 * nested one, which does not own it, so nothing could be mounted there.  */
static int
broker_unshare_mounts (struct broker *b)
{
  return b->opt.confine ? unshare (CLONE_NEWNS) : 0;
}

/* Make every mount private, so nothing mounted here propagates back into
 * bwrap's namespace and nothing mounted there appears here later.  */
static int
broker_make_private (struct broker *b)
{
  if (!b->opt.confine)
    return 0;
  return mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* Mount the projection on the workspace's own path: the workspace read-only
 * below, the command's private upper above.  nosuid,nodev: a setuid bit or a
 * device node the command makes in its upper must mean nothing.  userxattr:
 * overlayfs in a user namespace keeps its bookkeeping in user.* attributes
 * (and redirect_dir must not be named: it conflicts with it).  volatile
 * (Linux 5.10 and newer; older kernels refuse it and mount without):
 * without it the overlay's unmount, when the scope ends, and every syncfs
 * the workload calls sync the whole filesystem the upper lives on, the
 * host's /var/tmp with everyone's dirty pages, which the command then
 * waits for; with it the upper is scratch that is never synced.  That is
 * all it ever was: publication makes what it copies out of the upper
 * durable itself, and a pair left by a crash is removed unpublished.  */
static int
broker_mount_overlay (struct broker *b)
{
  char data[PATH_MAX * 3 + 64];
  int n;

  if (b->opt.root == NULL)
    return 0;
  n = snprintf (data, sizeof data,
                "lowerdir=%s,upperdir=%s,workdir=%s,userxattr,volatile",
                b->opt.lower, b->opt.upper, b->opt.work);
  if (n < 0 || (size_t) n >= sizeof data)
    return errno = ENAMETOOLONG, -1;
  if (mount ("overlay", b->opt.root, "overlay", MS_NOSUID | MS_NODEV, data)
      == 0)
    return 0;
  if (errno != EINVAL)
    return -1;
  data[n - sizeof ",volatile" + 1] = '\0';
  return mount ("overlay", b->opt.root, "overlay", MS_NOSUID | MS_NODEV, data);
}

/* Check that every directory above the last component of path, below
 * root, is a real directory: a symlink on the way would move the bind
 * somewhere else (the host checked, but the lower is the host's to
 * change until now).  Nothing of the workload runs yet to race this.  */
static int
broker_protect_parents (const char *root, char *path)
{
  struct stat st;
  size_t skip = strlen (root) + 1;

  for (char *slash = strchr (path + skip, '/'); slash != NULL;
       slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      int rc = lstat (path, &st);
      *slash = '/';
      if (rc < 0)
        return -1;
      if (!S_ISDIR (st.st_mode))
        return errno = ELOOP, -1;
    }
  return 0;
}

/* Bind root/name read-only over itself, if it is there: .git and .crucible
 * inside a writable root stay as they are (hooks, configuration the host
 * trusts), and so does the directory a .git file's gitdir: names inside
 * the root.  A symlink is not followed: binding its target would protect
 * the wrong place, and the link itself lives in the read-only lower.  */
static int
broker_protect_one (const char *root, const char *name)
{
  char path[PATH_MAX];
  struct stat st;
  int n = snprintf (path, sizeof path, "%s/%s", root, name);

  if (n < 0 || (size_t) n >= sizeof path)
    return errno = ENAMETOOLONG, -1;
  if (broker_protect_parents (root, path) < 0)
    return errno == ENOENT ? 0 : -1;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    return 0;
  if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
    return -1;
  return mount (NULL, path, NULL,
                MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
}

/* Keep the protected names read-only inside the projection.  */
static int
broker_protect (struct broker *b)
{
  for (int i = 0; i < b->opt.n_protect; i++)
    if (broker_protect_one (b->opt.root, b->opt.protect[i]) < 0)
      return -1;
  return 0;
}

/* Make the mount at path and every mount below it read-only, keeping the
 * flags bwrap's /proc has (a namespace that does not own a mount may not
 * clear them).  mount_setattr reaches the mounts below; a kernel before
 * 5.12 remounts the top one only, and a fresh procfs has nothing below
 * but bwrap's own read-only binds.  */
static int
broker_readonly (const char *path)
{
#ifdef SYS_mount_setattr
  struct mount_attr attr
      = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                      | MOUNT_ATTR_NOEXEC };

  if (syscall (SYS_mount_setattr, AT_FDCWD, path,
               BROKER_AT_RECURSIVE | AT_SYMLINK_NOFOLLOW, &attr, sizeof attr)
      == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
#endif
  return mount (NULL, path, NULL,
                MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
                    | MS_NOEXEC,
                NULL);
}

/* Bind path over itself, with whatever is mounted below it, read-only.  */
static int
broker_bind_readonly (const char *path)
{
  if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
    return -1;
  return broker_readonly (path);
}

/* Bind source over target read-only, nosuid, nodev, noexec.  */
static int
broker_cover_one (const char *source, const char *target)
{
  if (mount (source, target, NULL, MS_BIND, NULL) < 0)
    return -1;
  return broker_readonly (target);
}

/* Hide what the unreadable patterns name, and (with --hide-sockets) every
 * socket nobody named: one scan of the lower (broker/unreadable.h), then
 * each match in the projection covered by an empty, mode-000, read-only
 * file or directory, bound from a small tmpfs on the first --hide
 * directory (which broker_hide then covers in turn).  Mode 000 and no
 * CAP_DAC_OVERRIDE once the capabilities are gone: opening a covered path
 * fails, rather than reading as empty.  A covered name cannot be removed
 * or renamed either (it is a mount point).  The lower is the host's
 * workspace and nothing of the workload runs yet, so what was scanned is
 * what is covered; a path that turned into a symlink meanwhile refuses the
 * launch rather than binding over wherever it points.  */
static int
broker_cover (struct broker *b)
{
  struct unreadable_scan scan = {
    .patterns = b->opt.unreadable,
    .n_patterns = (size_t) b->opt.n_unreadable,
    .sockets = b->opt.hide_sockets,
    .allowed = b->opt.sockets,
    .n_allowed = (size_t) b->opt.n_sockets,
  };
  char file[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
  const char *scratch = b->opt.hide[0];
  int lower, rc = 0;

  if (b->opt.n_unreadable == 0 && !b->opt.hide_sockets)
    return 0;
  lower = open (b->opt.lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lower < 0)
    return -1;
  rc = unreadable_scan (lower, &scan);
  close (lower);
  if (rc < 0)
    return -1;
  if (scan.n_hits == 0)
    return 0;
  snprintf (file, sizeof file, "%s/empty-file", scratch);
  snprintf (dir, sizeof dir, "%s/empty-dir", scratch);
  if (mount ("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "mode=0755,size=4k,nr_inodes=8")
          < 0
      || mknod (file, S_IFREG, 0) < 0 || mkdir (dir, 0) < 0
      || chmod (dir, 0) < 0)
    rc = -1;
  for (size_t i = 0; rc == 0 && i < scan.n_hits; i++)
    {
      struct stat st;
      int n = snprintf (target, sizeof target, "%s/%s", b->opt.root,
                        scan.hits[i].rel);
      if (n < 0 || (size_t) n >= sizeof target)
        rc = (errno = ENAMETOOLONG, -1);
      else if (lstat (target, &st) < 0)
        rc = errno == ENOENT ? 0 : -1;
      else if (S_ISLNK (st.st_mode)
               || (S_ISDIR (st.st_mode) != scan.hits[i].dir))
        rc = (errno = ELOOP, -1);
      else
        rc = broker_cover_one (scan.hits[i].dir ? dir : file, target);
    }
  unreadable_scan_free (&scan);
  return rc;
}

/* Bind each granted socket inside the workspace from the lower over its
 * place in the projection: overlayfs shows a socket of its lower as an
 * inode of its own, which nothing can connect to.  Every directory above
 * it and the socket itself are checked not to be symlinks first.  Before
 * broker_cover, which puts its scratch tmpfs over the lower's path (and
 * covers a granted socket an unreadable pattern names: unreadable wins).  */
static int
broker_bind_sockets (struct broker *b)
{
  for (int i = 0; i < b->opt.n_sockets; i++)
    {
      char src[PATH_MAX], dst[PATH_MAX];
      struct stat st;
      int n = snprintf (src, sizeof src, "%s/%s", b->opt.lower,
                        b->opt.sockets[i]);
      int m
          = snprintf (dst, sizeof dst, "%s/%s", b->opt.root, b->opt.sockets[i]);
      if (n < 0 || m < 0 || (size_t) n >= sizeof src
          || (size_t) m >= sizeof dst)
        return errno = ENAMETOOLONG, -1;
      if (broker_protect_parents (b->opt.lower, src) < 0
          || lstat (src, &st) < 0)
        {
          if (errno == ENOENT)
            continue;
          return -1;
        }
      if (!S_ISSOCK (st.st_mode))
        continue;
      if (mount (src, dst, NULL, MS_BIND, NULL) < 0)
        return -1;
    }
  return 0;
}

/* Cover the hidden layer paths with an empty read-only tmpfs: the overlay
 * holds its own references, and the workload must reach neither the raw
 * lower (a path around the projection) nor the upper (the same writes,
 * unprotected).  After the overlay, which needs them.  */
static int
broker_hide (struct broker *b)
{
  for (int i = 0; i < b->opt.n_hide; i++)
    if (mount ("tmpfs", b->opt.hide[i], "tmpfs",
               MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=000")
        < 0)
      return -1;
  return 0;
}

/* Give up every capability bwrap left for the mounts, for good: ambient
 * cleared, securebits locked so that uid 0 (crucible run as root maps to
 * it) gains nothing on exec, the bounding set emptied, and the sets
 * zeroed.  After the last mount, which needed CAP_SYS_ADMIN; the
 * securebits and the bounding set need CAP_SETPCAP, so they go before
 * capset.  */
static int
broker_drop_caps (struct broker *b)
{
  struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

  if (!b->opt.confine)
    return 0;
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return -1;
  if (prctl (PR_SET_SECUREBITS,
             SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED
                 | SECBIT_NO_CAP_AMBIENT_RAISE
                 | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
             0, 0, 0)
      < 0)
    return -1;
  /* EINVAL past the kernel's last capability ends the walk.  */
  for (int cap = 0; cap < 64; cap++)
    if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      {
        if (errno == EINVAL)
          break;
        return -1;
      }
  memset (data, 0, sizeof data);
  if (syscall (SYS_capset, &head, data) < 0)
    return -1;
  return broker_forbid_dump (b);
}

/* Set one limit, soft and hard alike, so the workload cannot raise it.  */
static int
broker_limit (int resource, unsigned long value)
{
  const struct rlimit lim = { value, value };

  return value == 0 ? 0 : setrlimit (resource, &lim);
}

/* The command line's ceilings.  RLIMIT_NPROC counts the user's processes
 * and does not bind uid 0; the host claims the process limit only where a
 * test shows it holding.  */
static int
broker_set_limits (struct broker *b)
{
  if (broker_limit (RLIMIT_CPU, b->opt.limits.cpu_seconds) < 0
      || broker_limit (RLIMIT_NOFILE, b->opt.limits.open_files) < 0
      || broker_limit (RLIMIT_NPROC, b->opt.limits.processes) < 0
      || broker_limit (RLIMIT_AS, b->opt.limits.address_space) < 0)
    return -1;
  return 0;
}

/* The top-level /proc entries masked outright, over the read-only bind
 * every non-process entry gets: runc's and Docker's maskedPaths (the
 * floor), and /proc/key-users beside /proc/keys.  They show the host's
 * kernel memory, every user's keys, timer, scheduler and interrupt
 * internals (side channels on other tenants) and hardware, none of which
 * a coding session reads.  A file is covered by an empty read-only file,
 * a directory by an empty read-only tmpfs.  */
static const char *const broker_proc_masked[] = {
  "acpi", "asound",     "interrupts",    "kcore",
  "keys", "key-users",  "latency_stats", "sched_debug",
  "scsi", "timer_list", "timer_stats",
};

/* Whether name is a process's directory in /proc: digits only.  */
static bool
broker_proc_is_pid (const char *name)
{
  if (*name == '\0')
    return false;
  for (const char *p = name; *p != '\0'; p++)
    if (*p < '0' || *p > '9')
      return false;
  return true;
}

/* Whether the /proc entry de, at path, is a directory or a regular file:
 * by the type readdir gives, which procfs fills in (no lookup of its own
 * for each entry), else by an lstat; -1 with errno when that fails.  */
static int
broker_proc_bindable (const struct dirent *de, const char *path)
{
  struct stat st;

  if (de->d_type != DT_UNKNOWN)
    return de->d_type == DT_DIR || de->d_type == DT_REG;
  if (lstat (path, &st) < 0)
    return -1;
  return S_ISDIR (st.st_mode) || S_ISREG (st.st_mode);
}

/* Bind every top-level /proc entry that is not a process's read-only over
 * itself.  The sandbox's uid is host uid 0 when crucible runs as root, and
 * the kernel lets uid 0 write these files with no capability at all:
 * /proc/sys/kernel/core_pattern (a crash then runs a program as the host's
 * root), modprobe, vm/drop_caches, sysrq-trigger, irq affinities, PSI
 * triggers.  bwrap 0.8's --proc skips its own read-only bind of /proc/sys.
 * By class, not by name, so an entry a newer kernel adds is covered too.
 * Left alone: the pid directories, which in the sandbox's pid namespace
 * are its own processes, and the symlinks (self, thread-self, mounts,
 * net, ...), which point into them.  Before the workload exists, with
 * CAP_SYS_ADMIN still held.  */
static int
broker_proc_readonly (struct broker *b)
{
  DIR *proc;
  struct dirent *de;
  int rc = 0;

  if (!b->opt.confine)
    return 0;
  proc = opendir ("/proc");
  if (proc == NULL)
    return -1;
  while (rc == 0 && (de = readdir (proc)) != NULL)
    {
      char path[PATH_MAX];
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || broker_proc_is_pid (de->d_name))
        continue;
      snprintf (path, sizeof path, "/proc/%s", de->d_name);
      int bindable = broker_proc_bindable (de, path);
      if (bindable < 0)
        rc = errno == ENOENT ? 0 : -1;
      else if (bindable)
        rc = broker_bind_readonly (path);
    }
  closedir (proc);
  return rc;
}

/* Cover one masked entry, if it is there, with empty (a file) or an empty
 * read-only tmpfs (a directory).  */
static int
broker_proc_mask_one (const char *name, const char *empty)
{
  char path[PATH_MAX];
  struct stat st;

  snprintf (path, sizeof path, "/proc/%s", name);
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : -1;
  if (S_ISDIR (st.st_mode))
    return mount ("tmpfs", path, "tmpfs",
                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0555,size=4k,nr_inodes=1");
  if (!S_ISREG (st.st_mode))
    return 0;
  return broker_cover_one (empty, path);
}

/* Mask the entries of broker_proc_masked.  The empty file the files are
 * covered with is made on a scratch tmpfs mounted for a moment over
 * /proc/fs (on every kernel, and bound read-only already), which is
 * detached again once bound: the binds keep it, nothing else can reach
 * it, and /proc/fs shows its read-only self again.  */
static int
broker_proc_mask (struct broker *b)
{
  static const char scratch[] = "/proc/fs", empty[] = "/proc/fs/empty";
  size_t n = sizeof broker_proc_masked / sizeof *broker_proc_masked;
  int rc = 0;

  if (!b->opt.confine)
    return 0;
  if (mount ("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "mode=0755,size=4k,nr_inodes=4")
      < 0)
    return -1;
  if (mknod (empty, S_IFREG | 0444, 0) < 0)
    rc = -1;
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = broker_proc_mask_one (broker_proc_masked[i], empty);
  if (umount2 (scratch, MNT_DETACH) < 0 && rc == 0)
    rc = -1;
  return rc;
}

/* Bind the broker's own /proc entry (/proc/1 in its pid namespace)
 * read-only over itself, with its tasks: the workload may share its uid,
 * and comm, oom_score_adj, coredump_filter, attr/, clear_refs or the maps
 * of its keeper would otherwise be the workload's to write.  */
static int
broker_proc_self (struct broker *b)
{
  char path[64];

  if (!b->opt.confine)
    return 0;
  snprintf (path, sizeof path, "/proc/%ld", (long) getpid ());
  return broker_bind_readonly (path);
}

/* One listener on addr (len bytes), its port set: close-on-exec, so
 * the workload never holds it, and non-blocking, so a connection that
 * went away between poll and accept cannot stall the broker.  */
static int
broker_listen_one (int family, const struct sockaddr *addr, socklen_t len)
{
  int one = 1;
  int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

  if (fd < 0)
    return -1;
  if ((family == AF_INET6
       && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
      || bind (fd, addr, len) < 0 || listen (fd, 64) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

/* With a net channel: listen on 127.0.0.1 and [::1] at BROKER_NET_PORT
 * inside the command's network namespace (bwrap brought its loopback up),
 * which is where the workload's proxy variables point.  Loopback only:
 * the namespace has no other interface, and nothing but the workload is
 * in it.  IPv6 may be switched off in this kernel; IPv4 may not fail.
 * Before the workload's filter, which refuses bind and listen unless
 * allowLocalBinding.  */
static int
broker_listen (struct broker *b)
{
  struct sockaddr_in v4 = { .sin_family = AF_INET,
                            .sin_port = htons (BROKER_NET_PORT),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
                             .sin6_port = htons (BROKER_NET_PORT),
                             .sin6_addr = IN6ADDR_LOOPBACK_INIT };

  if (b->opt.net_fd < 0)
    return 0;
  b->listen_fd[0]
      = broker_listen_one (AF_INET, (struct sockaddr *) &v4, sizeof v4);
  if (b->listen_fd[0] < 0)
    return -1;
  b->listen_fd[1]
      = broker_listen_one (AF_INET6, (struct sockaddr *) &v6, sizeof v6);
  if (b->listen_fd[1] < 0 && errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL)
    return -1;
  return 0;
}

/* Read the workload's seccomp filter from --seccomp-fd: classic BPF, whole
 * instructions, no more than the kernel takes.  Now, before the sweep
 * closes the descriptor; it is loaded last (broker_load_filter).  */
static int
broker_read_filter (struct broker *b)
{
  size_t len;
  char *buf;

  if (b->opt.seccomp_fd < 0)
    return 0;
  int rc = broker_read_all (b->opt.seccomp_fd, BROKER_MAX_FILTER_BYTES, &buf,
                            &len);
  b->filter = (struct sock_filter *) (void *) buf;
  if (rc < 0)
    return -1;
  if (len == 0 || len % sizeof (struct sock_filter) != 0)
    return errno = EINVAL, -1;
  b->filter_len = len / sizeof (struct sock_filter);
  return 0;
}

/* Load the workload's filter (sandbox/seccomp.h): the keyrings, the mount
 * table, new namespaces, the machine's administration, bpf, perf,
 * userfaultfd and the terminal-injecting ioctls refused.  Last: the steps
 * above need mount, umount2 and unshare, which it refuses, and the kernel
 * takes a filter from a process without CAP_SYS_ADMIN only under
 * no_new_privs, set by then.  It binds the broker and everything it
 * forks, for good: a filter can be stacked on, never removed.  */
static int
broker_load_filter (struct broker *b)
{
  struct sock_fprog prog
      = { .len = (unsigned short) b->filter_len, .filter = b->filter };

  if (b->filter == NULL)
    return 0;
  return prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* Getting ready, in order.  The environment is read before the sweep that
 * would close its descriptor; descriptors are closed before anything else
 * opens one; the mounts need the capabilities, which go after them; and
 * whatever changes the mount table goes before the cwd.  */
static const struct broker_step broker_setup_steps[] = {
  { "making the broker undumpable", broker_forbid_dump },
  { "reading the environment", broker_read_env },
  { "reading the workload's seccomp filter", broker_read_filter },
  { "closing inherited descriptors", broker_close_inherited },
  { "becoming the child subreaper", broker_become_reaper },
  { "making a mount namespace", broker_unshare_mounts },
  { "making the mounts private", broker_make_private },
  { "making host-global /proc read-only", broker_proc_readonly },
  { "masking /proc", broker_proc_mask },
  { "making the broker's /proc entry read-only", broker_proc_self },
  { "waiting for the command", broker_await_go },
  { "mounting the projection", broker_mount_overlay },
  { "protecting repository metadata", broker_protect },
  { "binding granted sockets", broker_bind_sockets },
  { "covering unreadable paths", broker_cover },
  { "hiding the layer paths", broker_hide },
  { "dropping capabilities", broker_drop_caps },
  { "setting no_new_privs", broker_forbid_new_privs },
  { "disabling core dumps", broker_forbid_core },
  { "setting limits", broker_set_limits },
  { "watching signals", broker_watch_signals },
  { "entering the working directory", broker_enter_cwd },
  { "listening on the proxy's inside port", broker_listen },
  { "loading the workload's seccomp filter", broker_load_filter },
};

/* Run the setup steps; report the first failure on stderr and the channel.  */
static int
broker_setup (struct broker *b)
{
  size_t n = sizeof broker_setup_steps / sizeof broker_setup_steps[0];

  for (size_t i = 0; i < n; i++)
    if (broker_setup_steps[i].run (b) < 0)
      {
        int code = errno;
        fprintf (stderr, BROKER_NAME ": %s: %s\n", broker_setup_steps[i].what,
                 strerror (code));
        broker_send (b->opt.status_fd, BROKER_MSG_FAILED, code,
                     BROKER_STAGE_SETUP);
        return -1;
      }
  return 0;
}

/* Give the workload default dispositions and an empty mask: the broker's
 * blocked set, and anything the host ignored (SIGPIPE), must not leak into
 * the command, whose pipelines would then end in EPIPE errors, not quietly,
 * and whose children could not be stopped by SIGTERM.  */
static void
broker_reset_signals (void)
{
  struct sigaction dfl;
  sigset_t none;

  memset (&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    sigaction (sig, &dfl, NULL); /* fails harmlessly for KILL, STOP, libc's */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

/* In the forked child, for a workload with standard streams of its own
 * (a GO with five descriptors): its stdin and its stderr, stdout being
 * the output already.  The descriptors they came on are close-on-exec
 * (MSG_CMSG_CLOEXEC), so the three numbers are all it holds of them.  */
static int
broker_workload_streams (struct broker *b)
{
  if (b->opt.input_fd < 0 && b->opt.error_fd < 0)
    return 0;
  if (b->opt.input_fd < 0 || b->opt.error_fd < 0
      || dup2 (b->opt.input_fd, 0) < 0 || dup2 (b->opt.error_fd, 2) < 0)
    return -1;
  return 0;
}

/* Only the workload and what it starts hold its streams, so the end of
 * each is seen when they are gone, and its input's writer learns when
 * nobody reads it any more, not when the broker is gone.  */
static void
broker_drop_streams (struct broker *b)
{
  int *own[] = { &b->opt.output_fd, &b->opt.input_fd, &b->opt.error_fd };

  for (size_t i = 0; i < sizeof own / sizeof *own; i++)
    if (*own[i] >= 0)
      {
        close (*own[i]);
        *own[i] = -1;
      }
}

/* In the forked child: become the workload.  Never returns.  */
static void __attribute__ ((noreturn))
broker_exec_workload (struct broker *b, int gate)
{
  char go;
  ssize_t n;

  /* Its own process group, so one kill reaches the workload and whatever
   * it did not move elsewhere.  */
  setpgid (0, 0);
  broker_reset_signals ();
  /* The output pipe becomes the workload's stdout and stderr; the broker's
   * own stderr (bwrap's, which the host reads apart) is not the workload's
   * business.  */
  if (b->opt.output_fd >= 0
      && (dup2 (b->opt.output_fd, 1) < 0 || dup2 (b->opt.output_fd, 2) < 0))
    _exit (BROKER_EXIT_EXEC);
  if (broker_workload_streams (b) < 0)
    _exit (BROKER_EXIT_EXEC);
  /* Wait until the host has been told this pid: the workload never runs
   * unless the host can account for it.  End of file means it was not.  */
  do
    n = read (gate, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    _exit (BROKER_EXIT_EXEC);
  close (gate);
  if (b->envp != NULL)
    execve (b->opt.argv[0], b->opt.argv, b->envp);
  else
    execv (b->opt.argv[0], b->opt.argv);
  broker_send (b->opt.status_fd, BROKER_MSG_FAILED, errno, BROKER_STAGE_EXEC);
  _exit (BROKER_EXIT_EXEC);
}

/* Fork the workload, tell the host its pid, then let it exec.  */
static int
broker_start (struct broker *b)
{
  int gate[2];
  pid_t pid;

  if (pipe2 (gate, O_CLOEXEC) < 0 || (pid = fork ()) < 0)
    {
      int code = errno;
      fprintf (stderr, BROKER_NAME ": starting %s: %s\n", b->opt.argv[0],
               strerror (code));
      broker_send (b->opt.status_fd, BROKER_MSG_FAILED, code,
                   BROKER_STAGE_FORK);
      return -1;
    }
  if (pid == 0)
    {
      close (gate[1]);
      broker_exec_workload (b, gate[0]);
    }
  close (gate[0]);
  broker_drop_streams (b);
  /* Set the group from this side too, so that it exists before STARTED
   * goes out and a STOP arriving at once finds it.  */
  setpgid (pid, pid);
  b->workload = pid;
  if (broker_send (b->opt.status_fd, BROKER_MSG_STARTED, pid,
                   BROKER_STAGE_NONE))
    {
      ssize_t n = write (gate[1], "x", 1);
      (void) n; /* a short write closes the gate: the child just exits */
    }
  close (gate[1]);
  return 0;
}

/* Reap every child that has ended and report the workload's own status.
 * Tells whether anything of the scope is left.  */
static enum broker_scope
broker_reap (struct broker *b)
{
  for (;;)
    {
      int status;
      /* __WALL: a descendant cloned with an exit signal other than SIGCHLD
       * is still part of the scope, and must not make it look empty.  */
      pid_t pid = waitpid (-1, &status, WNOHANG | __WALL);
      if (pid == 0)
        return BROKER_SCOPE_LIVE;
      if (pid < 0 && errno == EINTR)
        continue;
      if (pid < 0)
        return errno == ECHILD ? BROKER_SCOPE_EMPTY : BROKER_SCOPE_LIVE;
      if (pid == b->workload)
        {
          b->workload_reaped = true;
          broker_send (b->opt.status_fd, BROKER_MSG_EXITED, status,
                       BROKER_STAGE_NONE);
        }
    }
}

/* The parent pid of pid, from /proc/PID/stat, or -1.  */
static pid_t
broker_parent_of (const char *pid)
{
  char path[64], buf[512];
  char *paren, *end;
  long ppid;
  int fd;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/%s/stat", pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* The command name in parentheses may hold anything the workload chose,
   * spaces and ')' included: parse after the last ')'.  */
  paren = strrchr (buf, ')');
  /* After the name: " S PPID ..." (one state letter, then the parent).  */
  if (paren == NULL || strlen (paren) < 5 || paren[1] != ' ' || paren[3] != ' ')
    return -1;
  ppid = strtol (paren + 4, &end, 10);
  if (end == paren + 4 || *end != ' ' || ppid < 0 || ppid > INT_MAX)
    return -1;
  return (pid_t) ppid;
}

/* Signal every process whose parent is the broker: orphans of the scope
 * come here, so this reaches a descendant that left the workload's group.
 * A child's pid cannot be reused before the broker reaps it, so what the
 * scan finds is still ours when the signal goes.  */
static void
broker_signal_children (int sig)
{
  DIR *proc = opendir ("/proc");
  struct dirent *de;
  pid_t self = getpid ();

  if (proc == NULL)
    return;
  while ((de = readdir (proc)) != NULL)
    if (de->d_name[0] >= '1' && de->d_name[0] <= '9'
        && broker_parent_of (de->d_name) == self)
      kill ((pid_t) strtol (de->d_name, NULL, 10), sig);
  closedir (proc);
}

/* Send sig to everything of the scope the broker can name right now.  */
static void
broker_signal_scope (struct broker *b, int sig)
{
  /* The group id is ours only while the workload's zombie pins it: once
   * reaped, the number may come to name a stranger's group.  */
  if (!b->workload_reaped)
    kill (-b->workload, sig);
  /* As PID 1 of a namespace, everything else in it is the scope.  Never
   * outside one, where kill(-1) reaches every process the user owns.  */
  if (getpid () == 1)
    kill (-1, sig);
  broker_signal_children (sig);
}

/* Reap for up to ms milliseconds, or until the scope is empty.  */
static enum broker_scope
broker_wait_empty (struct broker *b, int ms)
{
  for (int waited = 0; waited < ms; waited += BROKER_TICK_MS)
    {
      if (broker_reap (b) == BROKER_SCOPE_EMPTY)
        return BROKER_SCOPE_EMPTY;
      broker_sleep_ms (BROKER_TICK_MS);
    }
  return broker_reap (b);
}

/* SIGKILL the scope round by round (each death hands grandchildren to the
 * broker) until nothing is left, or give up after BROKER_KILL_MS.  */
static enum broker_scope
broker_kill_all (struct broker *b)
{
  for (int waited = 0; waited < BROKER_KILL_MS; waited += BROKER_TICK_MS)
    {
      if (broker_reap (b) == BROKER_SCOPE_EMPTY)
        return BROKER_SCOPE_EMPTY;
      broker_signal_scope (b, SIGKILL);
      broker_sleep_ms (BROKER_TICK_MS);
    }
  return broker_reap (b);
}

/* Confirm the scope empty to the host, then stay until the host closes the
 * channel: exiting at once would reset the channel under a STOP the host
 * may be sending at the same moment, and a reset loses the DONE still
 * unread.  The broker exits next.  */
static void broker_port_close (struct broker *b);

/* Milliseconds of the monotonic clock.  */
static uint64_t
broker_now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int
broker_finish (struct broker *b)
{
  struct broker_msg msg;

  /* Nothing of the scope is left to connect: the listeners and any
   * connection not yet passed on go before DONE.  */
  for (int i = 0; i < 2; i++)
    if (b->listen_fd[i] >= 0)
      close (b->listen_fd[i]);
  if (b->pending_fd >= 0)
    close (b->pending_fd);
  b->listen_fd[0] = b->listen_fd[1] = b->pending_fd = -1;
  broker_port_close (b);
  broker_send (b->opt.status_fd, BROKER_MSG_DONE, 0, BROKER_STAGE_NONE);
  shutdown (b->opt.status_fd, SHUT_WR);
  while (recv (b->opt.status_fd, &msg, sizeof msg, 0) > 0 || errno == EINTR)
    ;
  return BROKER_EXIT_DONE;
}

/* End the whole scope: sig first and SIGKILL after the grace period (at once
 * for SIGKILL), then confirm.  Returns the broker's exit status.  */
static int
broker_stop (struct broker *b, int sig)
{
  if (sig != SIGKILL)
    {
      broker_signal_scope (b, sig);
      if (broker_wait_empty (b, BROKER_GRACE_MS) == BROKER_SCOPE_EMPTY)
        return broker_finish (b);
    }
  if (broker_kill_all (b) == BROKER_SCOPE_EMPTY)
    return broker_finish (b);
  /* No DONE: the host must not believe the scope empty.  */
  fprintf (stderr, BROKER_NAME ": the scope did not end within %d ms\n",
           BROKER_KILL_MS);
  return BROKER_EXIT_STUCK;
}

/* Drain the signalfd; the signal to stop the scope with, or 0.  */
static int
broker_read_signals (struct broker *b)
{
  struct signalfd_siginfo si;
  int stop = 0;

  while (read (b->signal_fd, &si, sizeof si) == (ssize_t) sizeof si)
    {
      if (si.ssi_signo == SIGCHLD)
        continue;
      /* As PID 1 the kernel drops a signal the broker has no handler for
       * when it comes from inside the namespace; reading it from a
       * signalfd would undo that shield, so only a sender outside (pid 0
       * as seen from here) may stop the scope this way.  */
      if (getpid () == 1 && si.ssi_pid != 0)
        continue;
      stop = SIGKILL;
    }
  return stop;
}

/* Read the host's request: the signal to stop the scope with, 0 for
 * nothing, SIGKILL when the host is gone.  A record that is not a valid
 * STOP counts as gone too: ending the scope is the only safe reading of a
 * host the broker does not understand.  */
static int
broker_read_request (struct broker *b)
{
  struct broker_msg msg;
  ssize_t n
      = recv (b->opt.status_fd, &msg, sizeof msg, MSG_DONTWAIT | MSG_TRUNC);

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return 0;
  if (n != (ssize_t) sizeof msg || msg.magic != BROKER_STATUS_MAGIC
      || msg.type != BROKER_MSG_STOP || msg.value <= 0 || msg.value >= NSIG)
    return SIGKILL;
  return msg.value;
}

/* Accept one connection from a listener that polled readable, to be
 * sent next.  A connection already gone is nothing.  */
static void
broker_accept (struct broker *b, int listener)
{
  int fd;

  do
    fd = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd >= 0)
    b->pending_fd = fd;
}

/* Send the accepted connection to the host and close the broker's copy,
 * so only the host's proxy holds it.  Without waiting: while the host has
 * not read the last one, the broker polls for room and accepts nothing
 * more (the workload's connections wait in the listen queue).  A host
 * that cannot take it (the channel closed) gets it closed.  */
static void
broker_send_pending (struct broker *b)
{
  char byte = BROKER_NET_CONNECTION;
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  ssize_t n;

  memset (control.buf, 0, sizeof control.buf);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &b->pending_fd, sizeof (int));
  do
    n = sendmsg (b->opt.net_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return;
  close (b->pending_fd);
  b->pending_fd = -1;
}

/* --- sandbox.network.ports ----------------------------------------------- */

/* How often the broker looks for the workload's listeners on its ports.  */
#define BROKER_PORT_WATCH_MS 200
/* How long one record to the host, or one connection inside, may wait.  */
#define BROKER_PORT_WAIT_MS 1000

/* The index of port among the --port ports, or -1.  */
static int
broker_port_index (const struct broker *b, unsigned port)
{
  for (int i = 0; i < b->opt.n_ports; i++)
    if (b->opt.ports[i] == port)
      return i;
  return -1;
}

/* Send one ports record (and fd, or -1) to the host, waiting at most
 * BROKER_PORT_WAIT_MS for room.  fd stays the caller's to close.  */
static void
broker_port_send (struct broker *b, int kind, unsigned port, uint32_t id,
                  int fd)
{
  struct broker_net_msg m
      = { .kind = (uint8_t) kind, .port = (uint16_t) port, .id = id };
  struct iovec iov = { .iov_base = &m, .iov_len = sizeof m };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  struct pollfd pfd = { .fd = b->opt.net_fd, .events = POLLOUT };

  if (fd >= 0)
    {
      memset (control.buf, 0, sizeof control.buf);
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof control.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
  for (int tries = 0; tries < 2; tries++)
    {
      ssize_t n;
      do
        n = sendmsg (b->opt.net_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
      while (n < 0 && errno == EINTR);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        return;
      if (poll (&pfd, 1, BROKER_PORT_WAIT_MS) <= 0)
        return;
    }
}

/* Scan one of /proc/net/tcp and tcp6 (this namespace's) for listeners
 * (state 0A) on a --port port, marking them in up.  Any address counts:
 * the namespace has only its loopback, so a listener is on 127.0.0.1,
 * ::1 or a wildcard, each of which broker_port_connect reaches.  A
 * missing file is nothing (IPv6 may be off).  */
static void
broker_port_scan (const struct broker *b, const char *path, bool *up)
{
  char line[512];
  FILE *f = fopen (path, "re");

  if (f == NULL)
    return;
  while (fgets (line, sizeof line, f) != NULL)
    {
      /* "  sl  local_address rem_address   st ...": the local port
       * after the first ':' of the address, the state after the remote
       * address, all in hex.  */
      char *colon = strchr (line, ':');
      char *lport = colon != NULL ? strchr (colon + 1, ':') : NULL;
      if (lport == NULL)
        continue;
      char *end;
      unsigned long port = strtoul (lport + 1, &end, 16);
      if (end == lport + 1 || *end != ' ')
        continue;
      char *rem = strchr (end + 1, ':');
      char *st = rem != NULL ? strchr (rem, ' ') : NULL;
      if (st == NULL)
        continue;
      unsigned long state = strtoul (st + 1, &end, 16);
      if (end == st + 1 || port > 0xffff)
        continue;
      int i = broker_port_index (b, port);
      if (i >= 0 && state == 0x0A)
        up[i] = true;
    }
  fclose (f);
}

/* Look at the workload's listeners and tell the host of each --port port
 * that began or stopped being served.  A port the broker forwards for
 * the host is its own listener, not the workload's: never reported.  */
static void
broker_port_watch (struct broker *b)
{
  bool up[BROKER_NET_MAX_PORTS] = { false };

  broker_port_scan (b, "/proc/net/tcp", up);
  broker_port_scan (b, "/proc/net/tcp6", up);
  for (int i = 0; i < b->opt.n_ports; i++)
    {
      bool serving = up[i] && b->fwd_fd[i][0] < 0 && b->fwd_fd[i][1] < 0;
      if (serving == b->port_up[i])
        continue;
      b->port_up[i] = serving;
      broker_port_send (b, serving ? BROKER_NET_LISTENING : BROKER_NET_GONE,
                        b->opt.ports[i], 0, -1);
    }
}

/* Connect to port on this namespace's loopback (127.0.0.1, then ::1),
 * waiting at most BROKER_PORT_WAIT_MS; the socket or -1.  */
static int
broker_port_connect (unsigned port)
{
  struct sockaddr_in v4 = { .sin_family = AF_INET,
                            .sin_port = htons ((uint16_t) port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
                             .sin6_port = htons ((uint16_t) port),
                             .sin6_addr = IN6ADDR_LOOPBACK_INIT };
  const struct sockaddr *addr[2]
      = { (struct sockaddr *) &v4, (struct sockaddr *) &v6 };
  socklen_t len[2] = { sizeof v4, sizeof v6 };
  struct timeval tv = { .tv_sec = BROKER_PORT_WAIT_MS / 1000 };

  for (int k = 0; k < 2; k++)
    {
      int fd = socket (addr[k]->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        continue;
      /* A server whose queue is full cannot hold the broker for long.  */
      setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (connect (fd, addr[k], len[k]) == 0)
        return fd;
      close (fd);
    }
  return -1;
}

/* Start or stop forwarding port i: listeners on 127.0.0.1 and ::1 inside,
 * whose connections go to the host (another command serves the port).  */
static void
broker_port_forward (struct broker *b, int i, bool on)
{
  struct sockaddr_in v4 = { .sin_family = AF_INET,
                            .sin_port = htons (b->opt.ports[i]),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
                             .sin6_port = htons (b->opt.ports[i]),
                             .sin6_addr = IN6ADDR_LOOPBACK_INIT };

  for (int k = 0; k < 2; k++)
    if (b->fwd_fd[i][k] >= 0)
      {
        close (b->fwd_fd[i][k]);
        b->fwd_fd[i][k] = -1;
      }
  /* The workload serves it itself: nothing to forward.  */
  if (!on || b->port_up[i])
    return;
  b->fwd_fd[i][0]
      = broker_listen_one (AF_INET, (struct sockaddr *) &v4, sizeof v4);
  b->fwd_fd[i][1]
      = broker_listen_one (AF_INET6, (struct sockaddr *) &v6, sizeof v6);
}

/* Act on one record from the host: connect, forward or stop forwarding
 * one of the --port ports.  Anything else is ignored.  */
static void
broker_port_request (struct broker *b, const struct broker_net_msg *m)
{
  int i = broker_port_index (b, m->port);

  if (i < 0 || m->zero != 0)
    return;
  if (m->kind == BROKER_NET_CONNECT)
    {
      int fd = broker_port_connect (m->port);
      broker_port_send (b, fd >= 0 ? BROKER_NET_CONNECTED : BROKER_NET_FAILED,
                        m->port, m->id, fd);
      if (fd >= 0)
        close (fd);
    }
  else if (m->kind == BROKER_NET_FORWARD || m->kind == BROKER_NET_UNFORWARD)
    broker_port_forward (b, i, m->kind == BROKER_NET_FORWARD);
}

static uint64_t broker_now_ms (void);

/* Before the workload starts: take the host's requests until it says
 * READY, so that the ports other commands of the session serve are
 * forwarded before the workload can first connect to one.  Bounded: a
 * host that never says so only delays the start by BROKER_NET_READY_MS,
 * and a port forwarded later is still forwarded.  */
static void
broker_port_await (struct broker *b)
{
  if (b->opt.n_ports == 0 || b->opt.net_fd < 0)
    return;
  uint64_t until = broker_now_ms () + BROKER_NET_READY_MS;
  for (;;)
    {
      uint64_t now = broker_now_ms ();
      if (now >= until)
        return;
      struct pollfd p = { .fd = b->opt.net_fd, .events = POLLIN };
      int r = poll (&p, 1, (int) (until - now));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0 || (p.revents & (POLLHUP | POLLERR)))
        return;
      struct broker_net_msg m;
      ssize_t n = recv (b->opt.net_fd, &m, sizeof m, MSG_DONTWAIT | MSG_TRUNC);
      if (n == (ssize_t) sizeof m && m.kind == BROKER_NET_READY)
        return;
      if (n == (ssize_t) sizeof m)
        broker_port_request (b, &m);
    }
}

/* Read what the host sent on the net channel.  The channel gone is
 * nothing here: the status channel says when the host is.  */
static void
broker_port_read (struct broker *b)
{
  struct broker_net_msg m;
  ssize_t n;

  while ((n = recv (b->opt.net_fd, &m, sizeof m, MSG_DONTWAIT | MSG_TRUNC)) > 0)
    if (n == (ssize_t) sizeof m)
      broker_port_request (b, &m);
}

/* Accept one connection on a forwarded port's listener and send it to
 * the host marked with the port; the broker keeps no copy.  */
static void
broker_port_accept (struct broker *b, int listener, unsigned port)
{
  int fd;

  do
    fd = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return;
  broker_port_send (b, BROKER_NET_ACCEPTED, port, 0, fd);
  close (fd);
}

/* Close every forwarded port's listeners (before DONE).  */
static void
broker_port_close (struct broker *b)
{
  for (int i = 0; i < b->opt.n_ports; i++)
    broker_port_forward (b, i, false);
}

/* The most descriptors the main loop polls.  */
#define BROKER_POLL_MAX (5 + 2 * BROKER_NET_MAX_PORTS)

/* The descriptors the main loop polls: the channel, the signals, and with
 * a net channel the channel itself (the host's requests, and room while
 * a connection waits to go), the proxy's listeners unless one waits, and
 * the forwarded ports' listeners.  Returns how many.  */
static nfds_t
broker_poll_set (const struct broker *b, struct pollfd fds[BROKER_POLL_MAX])
{
  nfds_t n = 2;

  fds[0] = (struct pollfd){ .fd = b->opt.status_fd, .events = POLLIN };
  fds[1] = (struct pollfd){ .fd = b->signal_fd, .events = POLLIN };
  if (b->opt.net_fd < 0)
    return n;
  fds[n++] = (struct pollfd){
    .fd = b->opt.net_fd,
    .events = (short) (POLLIN | (b->pending_fd >= 0 ? POLLOUT : 0))
  };
  for (int i = 0; i < 2 && b->pending_fd < 0; i++)
    if (b->listen_fd[i] >= 0)
      fds[n++] = (struct pollfd){ .fd = b->listen_fd[i], .events = POLLIN };
  for (int i = 0; i < b->opt.n_ports; i++)
    for (int k = 0; k < 2; k++)
      if (b->fwd_fd[i][k] >= 0)
        fds[n++] = (struct pollfd){ .fd = b->fwd_fd[i][k], .events = POLLIN };
  return n;
}

/* The --port port whose forwarded listener fd is, or 0.  */
static unsigned
broker_port_of (const struct broker *b, int fd)
{
  for (int i = 0; i < b->opt.n_ports; i++)
    if (b->fwd_fd[i][0] == fd || b->fwd_fd[i][1] == fd)
      return b->opt.ports[i];
  return 0;
}

/* Act on the net channel's and the listeners' readiness.  */
static void
broker_serve_net (struct broker *b, const struct pollfd *fds, nfds_t n)
{
  for (nfds_t i = 2; i < n; i++)
    {
      if (fds[i].revents == 0)
        continue;
      unsigned port = broker_port_of (b, fds[i].fd);
      if (fds[i].fd == b->opt.net_fd)
        {
          if (fds[i].revents & POLLIN)
            broker_port_read (b);
          if (b->pending_fd >= 0)
            broker_send_pending (b);
        }
      else if (port != 0)
        broker_port_accept (b, fds[i].fd, port);
      else if (b->pending_fd < 0)
        broker_accept (b, fds[i].fd);
    }
  if (b->pending_fd >= 0)
    broker_send_pending (b);
}

/* Keep the scope until it empties or the host (or a signal) ends it,
 * passing on the workload's connections to the proxy meanwhile.
 * Returns the broker's exit status.  */
static int
broker_supervise (struct broker *b)
{
  uint64_t next_watch = 0;

  for (;;)
    {
      struct pollfd fds[BROKER_POLL_MAX];
      nfds_t n = broker_poll_set (b, fds);
      int sig = 0, wait = -1;

      /* Ports are watched every BROKER_PORT_WATCH_MS.  */
      if (b->opt.n_ports > 0)
        {
          uint64_t now = broker_now_ms ();
          if (now >= next_watch)
            {
              broker_port_watch (b);
              next_watch = now + BROKER_PORT_WATCH_MS;
            }
          wait = (int) (next_watch - now > BROKER_PORT_WATCH_MS
                            ? BROKER_PORT_WATCH_MS
                            : next_watch - now);
          n = broker_poll_set (b, fds);
        }
      int r = poll (fds, n, wait);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return broker_stop (b, SIGKILL);
        }
      if (r == 0)
        continue;
      if (fds[1].revents != 0)
        sig = broker_read_signals (b);
      if (sig == 0 && fds[0].revents != 0)
        sig = broker_read_request (b);
      if (sig != 0)
        return broker_stop (b, sig);
      broker_serve_net (b, fds, n);
      if (broker_reap (b) == BROKER_SCOPE_EMPTY)
        return broker_finish (b);
    }
}

int
main (int argc, char **argv)
{
  struct broker b
      = { .signal_fd = -1, .listen_fd = { -1, -1 }, .pending_fd = -1 };

  for (int i = 0; i < BROKER_NET_MAX_PORTS; i++)
    b.fwd_fd[i][0] = b.fwd_fd[i][1] = -1;

  if (argc < 1)
    {
      fputs (BROKER_USAGE, stderr);
      return BROKER_EXIT_FAILED;
    }
  if (broker_parse_args (argc, argv, &b.opt) < 0
      || broker_check_fds (&b.opt) < 0 || broker_setup (&b) < 0)
    return BROKER_EXIT_FAILED;
  broker_port_await (&b);
  if (broker_start (&b) < 0)
    return BROKER_EXIT_FAILED;
  return broker_supervise (&b);
}
