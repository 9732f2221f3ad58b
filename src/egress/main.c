/* sandrun-egress: the egress gateway of `sandrun sandbox --allow-host`.
 *
 * Started by the sandbox supervisor, never by hand: it creates the
 * sandbox's network namespace (see netns.h), says "ready NSFD" on the
 * control socket (the supervisor joins the sandbox to /proc/PID/fd/NSFD),
 * serves until that socket ends, and writes one JSON line per connection
 * attempt to the log fd, then a summary line.  A separate executable so
 * that sandrun itself links neither nftables nor c-ares.  It serves as
 * nobody, without capabilities: only the set-up needs root. */
#include <errno.h>
#include <ifaddrs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/resource.h>
#include <unistd.h>

#include "egress/gateway.h"
#include "egress/loop.h"
#include "sandrun/util.h"

static int
parse_args (int argc, char **argv, struct gateway *gw, int *control_fd,
            sr_error **err)
{
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
      unsigned long long n = 0;
      if (v == NULL)
        return sr_fail (err, 0, "%s: needs a value", a);
      i++;
      if (strcmp (a, "--allow-host") == 0)
        {
          if (eg_policy_add_rule (gw->pol, v, err) < 0)
            return -1;
        }
      else if (strcmp (a, "--add-host") == 0)
        {
          if (eg_policy_add_host (gw->pol, v, err) < 0)
            return -1;
        }
      else if (sr_parse_u64 (v, &n) < 0)
        return sr_fail (err, 0, "%s \"%s\": expected a number", a, v);
      else if (strcmp (a, "--max-bytes") == 0)
        gw->max_bytes = n;
      else if (strcmp (a, "--max-connections") == 0)
        gw->max_conns = n;
      else if (strcmp (a, "--control-fd") == 0)
        *control_fd = (int) n;
      else if (strcmp (a, "--log-fd") == 0)
        gw->log_fd = (int) n;
      else
        return sr_fail (err, 0, "unknown option %s", a);
    }
  if (*control_fd < 0 || gw->log_fd < 0)
    return sr_fail (err, 0, "--control-fd and --log-fd are required");
  return 0;
}

/* The host's own addresses: never reached, whatever name maps to them. */
static void
note_own_addresses (struct eg_policy *p)
{
  struct ifaddrs *ifs;
  if (getifaddrs (&ifs) < 0)
    return;
  for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next)
    if (i->ifa_addr
        && (i->ifa_addr->sa_family == AF_INET
            || i->ifa_addr->sa_family == AF_INET6))
      {
        p->own = xrealloc (p->own, (p->n_own + 1) * sizeof *p->own);
        eg_addr_from_sockaddr (i->ifa_addr, &p->own[p->n_own++]);
      }
  freeifaddrs (ifs);
}

/* Everything that needed root is done (the namespace, its rules, the
 * sockets bound in it): serve hostile input as nobody, without capabilities
 * and unable to gain any. */
static int
drop_privileges (sr_error **err)
{
  const gid_t nobody = 65534;
  if (setgroups (0, NULL) < 0 || setresgid (nobody, nobody, nobody) < 0
      || setresuid (nobody, nobody, nobody) < 0)
    return sr_fail (err, errno, "drop privileges");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return sr_fail (err, errno, "set no_new_privs");
  /* a change of credentials clears the parent-death signal */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  return 0;
}

static void
raise_nofile (void)
{
  struct rlimit r;
  if (getrlimit (RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 4096)
    {
      r.rlim_cur = r.rlim_max < 4096 ? r.rlim_max : 4096;
      setrlimit (RLIMIT_NOFILE, &r);
    }
}

int
main (int argc, char **argv)
{
  struct eg_policy pol = { 0 };
  static struct gateway gw; /* large (the DNS map): not on the stack */
  int control_fd = -1;
  _cleanup_error_ sr_error *err = NULL;
  gw.pol = &pol;
  gw.log_fd = -1;
  /* the supervisor's death ends the gateway, and with it the namespace */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  signal (SIGPIPE, SIG_IGN);
  if (parse_args (argc, argv, &gw, &control_fd, &err) < 0)
    goto fail;
  raise_nofile ();
  note_own_addresses (&pol);
  if (eg_netns_create (&gw.ns, &err) < 0 || drop_privileges (&err) < 0)
    goto fail;
  char ready[32];
  snprintf (ready, sizeof ready, "ready %d\n", gw.ns.nsfd);
  if (sr_write_all (control_fd, ready, strlen (ready)) < 0)
    return 1;
  if (eg_loop_run (&gw, control_fd, &err) < 0)
    {
      fprintf (stderr, "sandrun-egress: %s\n", err->msg);
      return 1;
    }
  eg_record_summary (&gw);
  eg_netns_close (&gw.ns);
  eg_policy_clear (&pol);
  return 0;
fail:
  if (control_fd >= 0)
    {
      _cleanup_free_ char *line = xasprintf ("error %s\n", err->msg);
      sr_write_all (control_fd, line, strlen (line));
    }
  fprintf (stderr, "sandrun-egress: %s\n", err->msg);
  eg_policy_clear (&pol);
  return 125;
}
