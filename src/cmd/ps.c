#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "sandrun/util.h"

static bool
has_pid (const pid_t *pids, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* runc's table mode: run ps(1) with the given options and keep the header
 * and the lines whose PID column is one of the container's. */
static int
print_ps_table (const pid_t *pids, size_t n, char **ps_args, sr_error **err)
{
  _cleanup_strv_ char **argv = NULL;
  strv_append (&argv, "ps");
  if (ps_args[0] == NULL)
    strv_append (&argv, "-ef");
  for (size_t i = 0; ps_args[i] != NULL; i++)
    strv_append (&argv, ps_args[i]);

  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return sr_fail (err, errno, "ps: pipe");
  pid_t child = fork ();
  if (child < 0)
    return sr_fail (err, errno, "ps: fork");
  if (child == 0)
    {
      dup2 (fds[1], 1);
      execvp ("ps", argv);
      _exit (127);
    }
  close (fds[1]);
  _cleanup_fclose_ FILE *out = fdopen (fds[0], "r");
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  int pid_col = -1;
  while (getline (&line, &cap, out) > 0)
    {
      _cleanup_free_ char *copy = xstrdup (line);
      char *save = NULL;
      int col = 0;
      bool keep = pid_col < 0;
      for (char *tok = strtok_r (copy, " \t\n", &save); tok; tok = strtok_r (NULL, " \t\n", &save), col++)
        {
          long v;
          if (pid_col < 0 && strcmp (tok, "PID") == 0)
            pid_col = col;
          else if (col == pid_col && sr_parse_long (tok, &v) == 0)
            keep = has_pid (pids, n, v);
        }
      if (keep)
        fputs (line, stdout);
    }
  int status;
  waitpid (child, &status, 0);
  if (pid_col < 0)
    return sr_fail (err, EINVAL, "ps: no PID column in the output of ps");
  return 0;
}

static const struct option ps_options[] = {
  { "format", required_argument, NULL, 'f' },
  { NULL, 0, NULL, 0 },
};

int
cmd_ps (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  bool json = false;
  int c;

  opterr = 0;
  while ((c = getopt_long (argc, argv, "+f:", ps_options, NULL)) != -1)
    {
      if (c != 'f' || (strcmp (optarg, "json") != 0 && strcmp (optarg, "table") != 0))
        return sr_fail (err, EINVAL, "ps: usage: sandrun ps [--format table|json] <container-id> [ps options]"), 1;
      json = strcmp (optarg, "json") == 0;
    }
  if (optind >= argc)
    return sr_fail (err, EINVAL, "ps: usage: sandrun ps [--format table|json] <container-id> [ps options]"), 1;

  _cleanup_free_ pid_t *pids = NULL;
  size_t n;
  if (sr_container_pids (g, argv[optind], &pids, &n, err) < 0)
    return 1;
  if (!json)
    return print_ps_table (pids, n, argv + optind + 1, err) < 0 ? 1 : 0;
  printf ("[");
  for (size_t i = 0; i < n; i++)
    printf ("%s%d", i ? "," : "", (int) pids[i]);
  printf ("]\n");
  return 0;
}
