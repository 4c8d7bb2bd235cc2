/* A publication run beside the event loop.
 *
 * Publishing stages, applies and verifies every changed path: for ten
 * thousand files that is seconds of disk work, during which the session must
 * still draw, read keys and capture other commands' output.  A pubjob runs
 * sandbox_publish in a child process (not a thread: publishing as the
 * workspace's owner changes the effective identity, which glibc changes for
 * every thread of a process) and hands its answer back through a pipe the
 * loop watches.
 *
 * The child closes the pipe once its answer is written, and only then
 * removes what the publication left to remove (sandbox_publish_tidy: the
 * committed transaction, whose removal frees the blocks of every file it
 * replaced), so the answer does not wait for that.
 *
 * The child keeps no descriptor but that pipe, so it holds no other
 * command's status channel open; a publication it has begun is carried to
 * its end even when crucible is gone, since a transaction is safer finished
 * than abandoned (and an abandoned one is recovered at the next
 * preparation either way).  */
#ifndef CRUCIBLE_CORE_PUBJOB_H
#define CRUCIBLE_CORE_PUBJOB_H

#include "core/loop.h"
#include "lib/error.h"
#include "sandbox/backend.h"

struct pubjob;

typedef void (*pubjob_done_fn) (void *data);

/* Start publishing session's writes for call_id.  done(data) is called
 * from the loop once the answer is in; then call pubjob_finish.  */
int pubjob_start (struct loop *loop, struct sandbox_session *session,
                  const char *call_id, pubjob_done_fn done, void *data,
                  struct pubjob **out, struct cr_error **err);

/* The answer, as sandbox_publish would have given it (0, with *out filled,
 * or -1 with err set), and the job released.  Before done was called it
 * waits for the answer.  The child, which may still be removing what its
 * publication left once it has answered, is reaped later.  */
int pubjob_finish (struct pubjob *job, struct sandbox_publication *out,
                   struct cr_error **err);

/* Wait for every publishing child that answered and is still removing
 * what its publication left (sandbox_publish_tidy): crucible leaves none
 * running.  */
void pubjob_wait_tidied (void);

#endif
