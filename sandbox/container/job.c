/* The whole job onto the container's input (sandbox/container/job.h).  */
#include <config.h>

#include "sandbox/container/job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "sandbox/container/workspace.h"

void
job_sent_clear (struct job_sent *sent)
{
  for (size_t i = 0; i < sent->n_left_out; i++)
    {
      free (sent->left_out[i].path);
      free (sent->left_out[i].why);
    }
  free (sent->left_out);
  memset (sent, 0, sizeof *sent);
}

/* One frame through the sink.  */
static int
job_frame (job_sink_fn sink, void *data, enum jobproto_type type,
           const void *payload, size_t len, struct cr_error **err)
{
  struct buf b = BUF_INIT;
  int rc = jobproto_put (&b, type, payload, len, err);
  if (rc == 0)
    rc = sink (data, b.data, b.len, err);
  buf_free (&b);
  return rc;
}

/* The 'L' payload: each limit that is set, one "key=value" line.  */
static char *
job_limits_text (const struct job_limits *l, size_t *len)
{
  const struct
  {
    const char *key;
    uint64_t value;
  } rows[] = {
    { JOBPROTO_LIMIT_CPU, l->cpu_s },
    { JOBPROTO_LIMIT_AS, l->as_bytes },
    { JOBPROTO_LIMIT_FSIZE, l->fsize_bytes },
    { JOBPROTO_LIMIT_NPROC, l->nproc },
    { JOBPROTO_LIMIT_NOFILE, l->nofile },
    { JOBPROTO_LIMIT_DEADLINE_MS, l->deadline_ms },
    { JOBPROTO_LIMIT_GRACE_MS, l->grace_ms },
    { JOBPROTO_LIMIT_CHANGES_MAX,
      l->changes_max ? l->changes_max : JOB_CHANGES_MAX_DEFAULT },
    { JOBPROTO_LIMIT_STDIO, l->stdio ? 1 : 0 },
    { JOBPROTO_LIMIT_BIND, l->allow_binding },
  };
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].value != 0)
      buf_printf (&b, "%s=%llu\n", rows[i].key,
                  (unsigned long long) rows[i].value);
  return buf_steal (&b, len);
}

/* What the workspace's pieces go through: one 'W' frame each.  */
struct job_w
{
  job_sink_fn sink;
  void *data;
};

/* Wrap one piece of the archive in a 'W' frame.  */
static int
job_w_piece (void *data, const void *bytes, size_t len, struct cr_error **err)
{
  struct job_w *w = data;
  return job_frame (w->sink, w->data, JOB_WORKSPACE, bytes, len, err);
}

/* V, L, E... and C: everything before the workspace.  */
static int
job_put_head (const struct job *job, job_sink_fn sink, void *data,
              struct cr_error **err)
{
  size_t len;
  char *limits = job_limits_text (&job->limits, &len);
  int rc = job_frame (sink, data, JOB_VERSION, JOBPROTO_VERSION,
                      strlen (JOBPROTO_VERSION), err);
  if (rc == 0)
    rc = job_frame (sink, data, JOB_LIMITS, limits, len, err);
  free (limits);
  for (size_t i = 0; rc == 0 && job->envp && job->envp[i]; i++)
    rc = job_frame (sink, data, JOB_ENV, job->envp[i], strlen (job->envp[i]),
                    err);
  if (rc == 0)
    rc = job_frame (sink, data, JOB_COMMAND, job->line, strlen (job->line),
                    err);
  return rc;
}

int
job_put (const struct job *job, job_sink_fn sink, void *sink_data,
         struct job_sent *sent, struct cr_error **err)
{
  struct job_sent mine = { 0 };
  struct job_sent *s = sent != NULL ? sent : &mine;
  struct job_w w = { sink, sink_data };
  memset (s, 0, sizeof *s);
  int rc = job_put_head (job, sink, sink_data, err);
  if (rc == 0)
    rc = workspace_archive (
        job->root, job->leave_out,
        job->workspace_max ? job->workspace_max : JOB_WORKSPACE_MAX_DEFAULT,
        job->entries_max ? job->entries_max : JOB_ENTRIES_MAX_DEFAULT,
        job_w_piece, &w, s, err);
  if (rc == 0)
    rc = job_frame (sink, sink_data, JOB_GO, "", 0, err);
  job_sent_clear (&mine);
  if (rc < 0)
    cr_error_prefix (err, "sending the job to the container");
  return rc;
}

/* Write bytes to a blocking descriptor, all of them.  */
static int
job_fd_sink (void *data, const void *bytes, size_t len, struct cr_error **err)
{
  int fd = *(int *) data;
  const char *p = bytes;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, n < 0 ? errno : EIO,
                             "writing to the container's input");
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

int
job_write (int fd, const struct job *job, struct job_sent *sent,
           struct cr_error **err)
{
  return job_put (job, job_fd_sink, &fd, sent, err);
}
