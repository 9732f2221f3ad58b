/* The command table: each command's handler (main dispatches through
 * cmd_find) and its help, from which come `sandrun --help`, `sandrun COMMAND
 * --help`, `sandrun help [COMMAND]` and the man page (`sandrun help --man`,
 * which `make` runs to write sandrun.8). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/state.h"
#include "sandrun/util.h"

struct help_opt
{
  const char *names; /* "-b, --bundle": every spelling, comma-separated */
  const char *arg;   /* the value's name, or NULL for a flag */
  const char *text;
};

struct help_cmd
{
  const char *name;
  sr_cmd_fn fn;
  const char *operands; /* after the options */
  const char *summary;
  const struct help_opt *opts;
  const struct help_opt *more; /* NULL, or further options (run's own) */
};

#define END { NULL, NULL, NULL }

static const struct help_opt create_opts[] = {
  { "-b, --bundle", "DIR", "the bundle (default: the current directory)" },
  { "--console-socket", "PATH",
    "a unix socket that receives the terminal's master fd" },
  { "--pid-file", "FILE", "write the init's pid to FILE" },
  { "--no-pivot", NULL, "move the root instead of pivot_root (ramfs)" },
  { "--no-new-keyring", NULL, "keep the caller's session keyring" },
  { "--preserve-fds", "N", "pass fds 3 to 3+N-1 on to the process" },
  END,
};

/* run takes create's options, and these. */
static const struct help_opt run_only_opts[] = {
  { "-d, --detach", NULL, "return once the container runs" },
  { "--keep", NULL, "do not delete the container when it exits" },
  { "--no-subreaper", NULL, "accepted for runc compatibility" },
  END,
};

static const struct help_opt exec_opts[] = {
  { "-p, --process", "FILE", "the process, as config.json's process object" },
  { "-e, --env", "NAME=VALUE", "add or override a variable (repeatable)" },
  { "--cwd", "DIR", "the working directory in the container" },
  { "-u, --user", "UID[:GID]", "the user to run as" },
  { "-g, --additional-gids", "GID", "a supplementary group (repeatable)" },
  { "-c, --cap", "CAP", "add a capability (repeatable)" },
  { "--no-new-privs", NULL, "set no_new_privs" },
  { "--apparmor", "PROFILE", "the AppArmor profile" },
  { "--process-label", "LABEL", "the SELinux label" },
  { "-t, --tty", NULL, "give the process a terminal" },
  { "--console-socket", "PATH",
    "a unix socket that receives the terminal's master fd" },
  { "-d, --detach", NULL, "return once the process runs" },
  { "--pid-file", "FILE", "write the process's pid to FILE" },
  { "--preserve-fds", "N", "pass fds 3 to 3+N-1 on to the process" },
  { "--cgroup", "[CONTROLLER:]PATH",
    "a sub-cgroup of the container's to run in" },
  { "--ignore-paused", NULL, "run even though the container is paused" },
  END,
};

static const struct help_opt kill_opts[] = {
  { "-a, --all", NULL, "signal every process of the container" },
  END,
};

static const struct help_opt delete_opts[] = {
  { "-f, --force", NULL, "kill a running or paused container first" },
  END,
};

static const struct help_opt list_opts[] = {
  { "-q, --quiet", NULL, "print the ids only" },
  { "-f, --format", "table|json", "the output format (default: table)" },
  END,
};

static const struct help_opt ps_opts[] = {
  { "-f, --format", "table|json",
    "table: ps(1)'s output, to which further arguments go; json: the pids" },
  END,
};

static const struct help_opt update_opts[] = {
  { "-r, --resources", "FILE",
    "linux.resources as JSON (\"-\": standard input)" },
  { "--memory", "SIZE", "memory.limit (\"512M\", -1: unlimited)" },
  { "--memory-reservation", "SIZE", "memory.reservation" },
  { "--memory-swap", "SIZE", "memory.swap (memory plus swap)" },
  { "--kernel-memory", "SIZE", "memory.kernel (ignored by new kernels)" },
  { "--kernel-memory-tcp", "SIZE", "memory.kernelTCP" },
  { "--cpu-share", "N", "cpu.shares" },
  { "--cpu-quota", "N", "cpu.quota (microseconds per period)" },
  { "--cpu-period", "N", "cpu.period (microseconds)" },
  { "--cpu-burst", "N", "cpu.burst" },
  { "--cpu-rt-runtime", "N", "cpu.realtimeRuntime" },
  { "--cpu-rt-period", "N", "cpu.realtimePeriod" },
  { "--cpuset-cpus", "LIST", "cpu.cpus" },
  { "--cpuset-mems", "LIST", "cpu.mems" },
  { "--cpu-idle", "0|1", "cpu.idle" },
  { "--blkio-weight", "N", "blockIO.weight" },
  { "--pids-limit", "N", "pids.limit" },
  { "--l3-cache-schema", "SCHEMA", "intelRdt (refused without resctrl)" },
  { "--mem-bw-schema", "SCHEMA", "intelRdt (refused without resctrl)" },
  END,
};

static const struct help_opt events_opts[] = {
  { "--stats", NULL, "print the stats once and exit" },
  { "--interval", "DURATION", "stats every DURATION (\"5s\", the default)" },
  END,
};

static const struct help_opt spec_opts[] = {
  { "-b, --bundle", "DIR", "where to write config.json" },
  { "--rootless", NULL, "a config for an unprivileged user" },
  END,
};

static const struct help_opt sandbox_opts[] = {
  { "--rootfs", "DIR", "the root, read-only (default: a read-only view of the host's /usr, "
    "/bin, /sbin, /lib* and a few files of /etc)" },
  { "--workdir", "DIR", "mounted read-write at /work, the cwd; files written there belong to "
    "DIR's owner (default: an empty ephemeral /work)" },
  { "--ro-bind", "SRC:DST", "a host path shown read-only at DST (repeatable)" },
  { "--collect", "DIR", "copy the files the run created or changed in /work to DIR" },
  { "--env", "NAME=VALUE", "a variable (repeatable); else only PATH, HOME=/work, "
    "LANG=C.UTF-8, TMPDIR=/tmp" },
  { "--stdin", "FILE", "the command's stdin (default: sandrun's)" },
  { "--timeout", "DURATION", "wall-clock limit (default: 10s)" },
  { "--memory", "SIZE", "memory limit, no swap (default: 256M)" },
  { "--cpus", "N", "CPU bandwidth, e.g. 0.5 (default: unlimited)" },
  { "--cpu-time", "DURATION", "CPU time limit in seconds (default: unlimited)" },
  { "--pids", "N", "process and thread limit (default: 64)" },
  { "--output-limit", "SIZE", "captured output per stream; more ends the run "
    "(default: 1M)" },
  { "--file-size", "SIZE", "largest file the command may write (default: 256M)" },
  { "--disk", "SIZE", "bytes the run may write under /work (default: 256M)" },
  { "--tmp-size", "SIZE", "size of the /tmp tmpfs (default: 64M)" },
  { "--open-files", "N", "open file descriptors (default: 256)" },
  { "--net", "none", "network: none, only loopback (default and only mode)" },
  { "--allow-host", "PATTERN[:PORT]", "let connections to a name (api.example.com), a "
    "wildcard (*.example.com) or an address/CIDR through the egress gateway, on PORT or "
    "80 and 443 (repeatable; any turns the gateway on; default: no network)" },
  { "--add-host", "NAME:ADDR", "the gateway resolves NAME to ADDR without DNS (repeatable)" },
  { "--net-max-bytes", "SIZE", "bytes in and out through the gateway; more closes the "
    "connections (default: unlimited)" },
  { "--net-max-connections", "N", "connections through the gateway (default: unlimited)" },
  { "--quiet", NULL, "do not copy the command's output to sandrun's" },
  { "--receipt", "FILE", "write the receipt (JSON) to FILE; \"-\": stdout, the output "
    "then only in the receipt (default: none)" },
  { "--audit-log", "FILE", "append the receipt without the output as one JSON line "
    "(default: none)" },
  END,
};

/* mcp takes the sandbox's policy options: every one of `sandbox --help`
 * but those the server sets per call (--workdir, --collect, --receipt,
 * --stdin); the main ones are listed here. */
static const struct help_opt mcp_opts[] = {
  { "--timeout", "DURATION", "default and cap of every execution (10s)" },
  { "--memory", "SIZE", "memory of every sandbox and session" },
  { "--pids", "N", "processes of every sandbox and session" },
  { "--cpus", "N", "CPU bandwidth" },
  { "--disk", "SIZE", "writes to /work" },
  { "--output-limit", "SIZE", "output per stream" },
  { "--rootfs", "DIR", "the root filesystem (default: the host's /usr)" },
  { "--ro-bind", "SRC:DST", "a read-only input (repeatable)" },
  { "--env", "K=V", "an environment variable (repeatable)" },
  { "--allow-host", "PATTERN", "egress to this host (repeatable)" },
  { "--audit-log", "FILE", "append one JSON line per execution" },
  { "--idle-timeout", "DURATION", "of the sessions it starts" },
  { "--max-lifetime", "DURATION", "of the sessions it starts" },
  { "--runtime", "PATH", "the sandrun that runs executions (default: this one)" },
  END,
};

/* Sessions (issue 14), shown after the one-shot's options. */
static const struct help_opt sandbox_session_opts[] = {
  { "start --name NAME", "[OPTIONS]", "start a session: the options above (no command), "
    "--idle-timeout D (default: 10m), --max-lifetime D (default: 1h), --kernel python "
    "(keep one python3 alive for exec --code)" },
  { "exec NAME", "[OPTIONS] -- COMMAND", "one execution in the session and its receipt; "
    "OPTIONS: --timeout, --output-limit, --env, --stdin, --quiet, --receipt, --audit-log, "
    "--code CODE (kernel sessions; else the code is read from stdin)" },
  { "cp NAME SRC DST | cp NAME:SRC DST", NULL, "copy a host file into the session's "
    "/work or /tmp, or one out of them" },
  { "list", "[--format json]", "the live sessions" },
  { "stop NAME", NULL, "destroy the session and everything in it" },
  END,
};

static const struct help_opt no_opts[] = { END };

static const struct help_cmd commands[] = {
  { "create", cmd_create, "<container-id>", "create a container", create_opts,
    NULL },
  { "start", cmd_start, "<container-id>",
    "start the process of a created container", no_opts, NULL },
  { "run", cmd_run, "<container-id>",
    "create and start a container, and wait for it", create_opts,
    run_only_opts },
  { "state", cmd_state, "<container-id>",
    "print the state of a container (JSON)", no_opts, NULL },
  { "kill", cmd_kill, "<container-id> [SIGNAL]",
    "send a signal (default SIGTERM) to the init process of a container",
    kill_opts, NULL },
  { "delete", cmd_delete, "<container-id>",
    "delete a container and everything it holds", delete_opts, NULL },
  { "list", cmd_list, "", "list the containers", list_opts, NULL },
  { "ps", cmd_ps, "<container-id> [ps options]",
    "list the processes of a container", ps_opts, NULL },
  { "exec", cmd_exec, "<container-id> [COMMAND [ARG...]]",
    "run a new process inside a container", exec_opts, NULL },
  { "pause", cmd_pause, "<container-id>",
    "suspend every process of a container", no_opts, NULL },
  { "resume", cmd_resume, "<container-id>",
    "resume the processes of a paused container", no_opts, NULL },
  { "update", cmd_update, "<container-id>",
    "update the resource limits of a container", update_opts, NULL },
  { "events", cmd_events, "<container-id>",
    "print stats and OOM events of a container", events_opts, NULL },
  { "spec", cmd_spec, "", "write a default config.json", spec_opts, NULL },
  { "features", cmd_features, "",
    "print the features this runtime implements (JSON)", no_opts, NULL },
  { "sandbox", cmd_sandbox, "-- COMMAND [ARG...]",
    "run untrusted code in an ephemeral locked-down container and write its "
    "receipt (exit status: the command's, 128+N for signal N, 125 when "
    "sandrun could not run it)", sandbox_opts, sandbox_session_opts },
  { "mcp", cmd_mcp, "",
    "serve the Model Context Protocol on stdio: tools that run code in sandboxes",
    mcp_opts,
    NULL },
  { "help", cmd_help, "[COMMAND]", "print the help of sandrun or of a command",
    no_opts, NULL },
};

static const struct help_opt global_opts[] = {
  { "--root", "DIR", "state directory (default " SR_DEFAULT_ROOT ")" },
  { "--log", "FILE", "write log entries to FILE (default: stderr)" },
  { "--log-format", "text|json", "the log format (json: one object a line)" },
  { "--debug", NULL, "log debug messages" },
  { "--systemd-cgroup", NULL, "use the systemd cgroup driver" },
  { "-v, --version", NULL, "print the version" },
  { "-h, --help", NULL, "print this help" },
  END,
};

static const struct help_cmd *
find_command (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (commands); i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

sr_cmd_fn
cmd_find (const char *name)
{
  const struct help_cmd *c = find_command (name);
  return c != NULL ? c->fn : NULL;
}

static void
print_opts (FILE *out, const struct help_opt *o)
{
  for (; o->names != NULL; o++)
    {
      char left[64];
      snprintf (left, sizeof left, "%s%s%s", o->names, o->arg ? " " : "",
                o->arg ? o->arg : "");
      fprintf (out, "  %-28s %s\n", left, o->text);
    }
}

void
cmd_help_main (FILE *out)
{
  fprintf (out, "Usage: sandrun [global options] COMMAND [options] "
                "[arguments]\n\nAn OCI container runtime, compatible with "
                "runc.\n\nCommands:\n");
  for (size_t i = 0; i < ARRAY_SIZE (commands); i++)
    fprintf (out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\nGlobal options:\n");
  print_opts (out, global_opts);
  fprintf (out, "\nsandrun COMMAND --help prints the options of COMMAND.\n");
}

static void
print_command (FILE *out, const struct help_cmd *c)
{
  fprintf (out, "Usage: sandrun %s%s%s%s\n\n%s.\n", c->name,
           c->opts[0].names ? " [options]" : "", c->operands[0] ? " " : "",
           c->operands, c->summary);
  if (c->opts[0].names != NULL)
    {
      fprintf (out, "\nOptions:\n");
      print_opts (out, c->opts);
      if (c->more != NULL)
        print_opts (out, c->more);
    }
}

/* The spelling of `arg` ("--bundle", "-b") among an option's names. */
static bool
names_have (const char *names, const char *arg, size_t len)
{
  for (const char *p = names; (p = strstr (p, arg)) != NULL; p++)
    if ((p == names || p[-1] == ' ') && (p[len] == '\0' || p[len] == ','))
      return true;
  return false;
}

/* The option of table `o` spelt `arg`, or NULL. */
static const struct help_opt *
find_opt (const struct help_opt *o, const char *arg)
{
  for (; o != NULL && o->names != NULL; o++)
    if (names_have (o->names, arg, strlen (arg)))
      return o;
  return NULL;
}

/* Whether the option `arg` is one of `c`'s that take a separate value. */
static bool
takes_value (const struct help_cmd *c, const char *arg)
{
  const struct help_opt *o;

  if (strchr (arg, '=') != NULL || (arg[1] != '-' && strlen (arg) != 2))
    return false; /* "--opt=value", "-bDIR" */
  o = find_opt (c->opts, arg);
  if (o == NULL)
    o = find_opt (c->more, arg);
  return o != NULL && o->arg != NULL;
}

bool
cmd_wants_help (const char *name, int argc, char **argv)
{
  const struct help_cmd *c = find_command (name);

  if (c == NULL)
    return false;
  /* Among the options only: what follows the container id is the process's
   * (exec) or ps(1)'s. */
  for (int i = 1; i < argc && argv[i][0] == '-'; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        break;
      if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        return true;
      if (takes_value (c, argv[i]))
        i++;
    }
  return false;
}

int
cmd_help_command (const char *name, FILE *out)
{
  const struct help_cmd *c = find_command (name);

  if (c == NULL)
    return -1;
  print_command (out, c);
  return 0;
}

/* ---- the man page -------------------------------------------------------- */

/* roff: a leading dot or quote starts a request, a backslash an escape, and
 * a hyphen must be \- to stay a minus sign. */
static void
roff (FILE *out, const char *s)
{
  if (*s == '.' || *s == '\'')
    fputs ("\\&", out);
  for (; *s; s++)
    if (*s == '\\')
      fputs ("\\e", out);
    else if (*s == '-')
      fputs ("\\-", out);
    else
      fputc (*s, out);
}

static void
man_opts (FILE *out, const struct help_opt *o)
{
  for (; o->names != NULL; o++)
    {
      fputs (".TP\n\\fB", out);
      roff (out, o->names);
      fputs ("\\fR", out);
      if (o->arg)
        {
          fputs (" \\fI", out);
          roff (out, o->arg);
          fputs ("\\fR", out);
        }
      fputc ('\n', out);
      roff (out, o->text);
      fputc ('\n', out);
    }
}

static void
man_page (FILE *out)
{
  fprintf (out, ".TH SANDRUN 8 \"\" \"sandrun %s\" \"System Administration\"\n"
                ".SH NAME\nsandrun \\- an OCI container runtime, compatible "
                "with runc\n.SH SYNOPSIS\n\\fBsandrun\\fR [\\fIglobal "
                "options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] "
                "[\\fIarguments\\fR]\n.SH DESCRIPTION\nsandrun turns an OCI "
                "bundle (config.json and a root filesystem) into a container, "
                "and is driven by engines (podman, Docker, containerd) with "
                "the commands and flags of runc.\n.SH GLOBAL OPTIONS\n",
           PACKAGE_VERSION);
  man_opts (out, global_opts);
  fputs (".SH COMMANDS\n", out);
  for (size_t i = 0; i < ARRAY_SIZE (commands); i++)
    {
      const struct help_cmd *c = &commands[i];
      fprintf (out, ".SS %s", c->name);
      if (c->operands[0])
        {
          fputc (' ', out);
          roff (out, c->operands);
        }
      fputc ('\n', out);
      roff (out, c->summary);
      fputs (".\n", out);
      if (c->opts[0].names != NULL)
        {
          fputs (".RS\n", out);
          man_opts (out, c->opts);
          if (c->more != NULL)
            man_opts (out, c->more);
          fputs (".RE\n", out);
        }
    }
  fputs (".SH EXIT STATUS\n0 on success, 1 on an error (one line on stderr "
         "naming the container, the operation and the cause).  \\fBrun\\fR "
         "and \\fBexec\\fR exit with the status of the container's process, "
         "128+N when signal N killed it; \\fBexec\\fR exits 255 when the "
         "process could not be started.\n.SH FILES\n.TP\n"
         SR_DEFAULT_ROOT "/\\fIID\\fR/state.json\nThe state of container "
         "\\fIID\\fR (another directory with \\fB\\-\\-root\\fR).\n"
         ".SH SEE ALSO\nrunc(8), crun(1), the OCI runtime specification\n",
         out);
}

int
cmd_help (const struct sr_globals *g, int argc, char **argv, sr_error **err)
{
  (void) g;
  if (argc > 2)
    return sr_fail (err, EINVAL, "help: usage: sandrun help [COMMAND]"), 1;
  if (argc == 1)
    {
      cmd_help_main (stdout);
      return 0;
    }
  if (strcmp (argv[1], "--man") == 0)
    {
      man_page (stdout);
      return 0;
    }
  if (cmd_help_command (argv[1], stdout) < 0)
    return sr_fail (err, EINVAL, "help: unknown command \"%s\"", argv[1]), 1;
  return 0;
}
