/* The publication's write-ahead log: one file per transaction, a record
 * per step, each checksummed and synced before the step it announces is
 * taken.  The list of steps is also the list of fault points a test build
 * (--enable-fault-injection) can crash at.  */
#ifndef CRUCIBLE_SANDBOX_WAL_H
#define CRUCIBLE_SANDBOX_WAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/* The steps, in the order a transaction takes them.  */
enum wal_step
{
  WAL_BEGIN,      /* the transaction exists; the root is untouched */
  WAL_STAGED,     /* the plan, staged and backed up (payload: the plan) */
  WAL_APPLY,      /* about to apply one change (payload: its index) */
  WAL_APPLIED,    /* every change applied */
  WAL_VERIFIED,   /* the root holds exactly what was staged */
  WAL_COMMIT,     /* published and counted: the root stays as it is */
  WAL_ROLLBACK,   /* rolling the root back to its baseline */
  WAL_ROLLEDBACK, /* the root is its baseline again, proved */
  WAL_STEP_COUNT
};

/* The step's name in the log and as a fault point ("apply").  */
const char *wal_step_name (enum wal_step step);

/* The step a name stands for, or WAL_STEP_COUNT.  */
enum wal_step wal_step_from_name (const char *name);

/* Create the log in the transaction directory dirfd; returns its fd.  */
int wal_create (int dirfd, struct cr_error **err);

/* Open an existing log for appending; returns its fd.  */
int wal_open (int dirfd, struct cr_error **err);

/* Append a record and sync it (an apply record is only written: recovery
 * does not depend on it); then, in a test build, the step's fault point. */
int wal_append (int fd, enum wal_step step, const char *payload, size_t len,
                struct cr_error **err);

/* Append a record without syncing it and without its fault point: for a
 * caller that makes it durable in one sync with other files (a syncfs of
 * the filesystem holding the log, or an fdatasync of fd among others) and
 * only then calls wal_fault with the step's name.  The caller's comment
 * says why that order is as safe as wal_append's.  */
int wal_write (int fd, enum wal_step step, const char *payload, size_t len,
               struct cr_error **err);

struct wal_record
{
  enum wal_step step;
  char *payload; /* NUL-terminated; owned by the log */
  size_t len;
};

struct wal_log
{
  struct wal_record *records;
  size_t n;
  bool torn;    /* the last record was cut short: the crash was in it */
  bool corrupt; /* a record that fails its checksum has others after it */
};

/* Read every record of the log in dirfd.  */
int wal_read (int dirfd, struct wal_log *log, struct cr_error **err);

void wal_log_clear (struct wal_log *log);

/* A test build's fault point named point: crash (SIGKILL) when
 * CRUCIBLE_FAULT names it ("apply" or "apply:N" for the Nth hit), and
 * record the hit in CRUCIBLE_FAULT_LOG.  Nothing in a release build.  */
void wal_fault (const char *point);

/* Whether a test build injects ENOSPC into this write of phase ("stage"
 * or "apply"), as CRUCIBLE_FAULT_ENOSPC ("stage:N") says.  */
bool wal_fault_enospc (const char *phase);

#endif
