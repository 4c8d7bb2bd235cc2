/* Asking terminfo about $TERM.  */
#include <config.h>

#include "tui/terminfo.h"

#include <curses.h>
#include <term.h>

bool
terminfo_known (int fd)
{
  int found = 0;
  if (setupterm (NULL, fd, &found) == OK)
    del_curterm (cur_term);
  return found == 1;
}
