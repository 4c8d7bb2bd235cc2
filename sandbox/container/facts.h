/* What the engine says it can hold (/info), the image a command would run
 * (/images/NAME/json), and what crucible would ask of the engine for each
 * command: the container backend's inspection, which creates nothing.
 * The report's words are in doc/strings.md, "The container
 * backend".  */
#ifndef CRUCIBLE_SANDBOX_CONTAINER_FACTS_H
#define CRUCIBLE_SANDBOX_CONTAINER_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"
#include "sandbox/container/container.h"
#include "sandbox/container/engine.h"

/* What /info says the engine can hold.  */
struct engine_facts
{
  char *os;             /* OperatingSystem */
  char *kernel;         /* KernelVersion */
  char *runtime;        /* DefaultRuntime */
  char *cgroup_version; /* CgroupVersion: "1" or "2" */
  char *cgroup_driver;  /* CgroupDriver */
  bool memory_limit, swap_limit, pids_limit, cpu_cfs;
  bool seccomp;
  char *seccomp_profile; /* "default", or NULL */
  bool rootless;
  bool userns;
  /* The image: its name, and its ID when the engine has it, else why.  */
  char *image;
  char *image_id;
  char *image_why;
};

void engine_facts_clear (struct engine_facts *f);

/* Fill f from /info and /images/IMAGE/json; an image the engine does not
 * have is not an error (image_why says so), an /info it cannot answer
 * is.  */
int engine_facts_read (struct engine_client *c, const char *image,
                       struct engine_facts *f, struct cr_error **err);

/* Fill f from /info's JSON object (what engine_facts_read does with its
 * answer; separate so that it can be tested on engines' real answers).  */
void engine_facts_from_info (yajl_val info, struct engine_facts *f);

/* What crucible would ask the engine for, for each command.  */
struct container_request
{
  uint64_t memory_bytes;     /* memory and swap capped together at this */
  uint64_t pids;             /* the cgroup's process cap */
  uint64_t workspace_bytes;  /* the workspace tmpfs */
  uint64_t tmp_bytes;        /* /tmp's tmpfs */
  uint64_t file_bytes;       /* RLIMIT_FSIZE inside */
  unsigned long cpu_seconds; /* RLIMIT_CPU inside (sandbox.limits) */
  unsigned long open_files;  /* RLIMIT_NOFILE inside (sandbox.limits) */
  const char *user;          /* "65534:65534" */
};

/* The defaults, with the configuration's CPU and open-file limits.  */
void container_request_defaults (struct container_request *r,
                                 unsigned long cpu_seconds,
                                 unsigned long open_files);

/* The report, for the person (text) or as one line of JSON: the engine,
 * what it can hold beside what crucible would ask, and the image.  With
 * c NULL, the engine is unavailable for why.  Owned by the caller.  */
struct container_report
{
  const char *workspace;
  const char *mode; /* the inspection report's mode line */
  bool enabled;
  const struct engine_endpoint *endpoint; /* NULL when none was found */
  const struct engine_client *client;     /* NULL: unavailable */
  const char *why;                        /* unavailable: the reason */
  const struct engine_facts *facts;
  const struct container_request *request;
};

char *container_report_text (const struct container_report *r);
char *container_report_json (const struct container_report *r);

#endif
