/* linux.netDevices (config-linux.md "Network Devices"): move existing host
 * interfaces into the container's network namespace, renamed when asked,
 * with their permanent global addresses, and set them up.  Done by the
 * parent (host root) once the init exists, before it goes on.
 *
 * The move and the rename are one RTM_NEWLINK (IFLA_NET_NS_FD + IFLA_IFNAME),
 * so a name taken in the container fails the move instead of leaving the
 * device half-done.  The kernel drops addresses on a move: they are read
 * before and added again after.  Nothing is moved back at delete: the spec
 * leaves the device to the namespace's end (physical ones return to the
 * host, virtual ones are destroyed). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux_attrs_internal.h"
#include "netlink.h"
#include "sandrun/log.h"
#include "sandrun/util.h"

struct netns_pair
{
  int host_nl; /* rtnetlink socket in the runtime's network namespace */
  int ct_nl;   /* and in the container's */
  int host_ns; /* the namespaces themselves */
  int ct_ns;
};

static void
netns_pair_clear (struct netns_pair *p)
{
  sr_close (p->host_nl);
  sr_close (p->ct_nl);
  sr_close (p->host_ns);
  sr_close (p->ct_ns);
}

/* ---- names ---- */

/* What the kernel's dev_valid_name takes, plus: a template ("%d") only in
 * the name inside the container, where the kernel picks the number. */
static int
check_ifname (const char *name, bool template_ok, const char *what,
              sr_error **err)
{
  const char *pct;

  if (name == NULL || name[0] == '\0' || strlen (name) >= IFNAMSIZ
      || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return sr_fail (err, 0, "linux.netDevices: invalid %s \"%s\"", what,
                    name ? name : "");
  for (const char *c = name; *c; c++)
    if (*c == '/' || *c == ':' || (unsigned char) *c <= ' ' || *c == 0x7f)
      return sr_fail (err, 0, "linux.netDevices: invalid %s \"%s\"", what,
                      name);
  pct = strchr (name, '%');
  if (pct != NULL
      && (!template_ok || pct[1] != 'd' || strchr (pct + 1, '%') != NULL))
    return sr_fail (err, 0,
                    "linux.netDevices: invalid %s \"%s\" (a "
                    "template takes one %%d)",
                    what, name);
  return 0;
}

static const char *
container_name (const oci_net_device *d)
{
  return d->name != NULL && d->name[0] != '\0' ? d->name : d->host_name;
}

/* ---- links ---- */

struct link_info
{
  int index;
  unsigned int flags;
  char name[IFNAMSIZ];
};

static int
link_reply (const struct nlmsghdr *h, void *data, sr_error **err)
{
  struct link_info *li = data;
  const struct ifinfomsg *ifi = NLMSG_DATA (h);
  const struct rtattr *a;

  (void) err;
  if (h->nlmsg_type != RTM_NEWLINK
      || h->nlmsg_len < NLMSG_LENGTH (sizeof *ifi))
    return 0;
  li->index = ifi->ifi_index;
  li->flags = ifi->ifi_flags;
  a = sr_nl_msg_attr (h, sizeof *ifi, IFLA_IFNAME);
  if (a != NULL && RTA_PAYLOAD (a) > 0 && RTA_PAYLOAD (a) <= IFNAMSIZ)
    {
      memcpy (li->name, RTA_DATA (a), RTA_PAYLOAD (a));
      li->name[IFNAMSIZ - 1] = '\0';
    }
  return 0;
}

/* A link request for `index` (0: by name), the header filled in. */
static struct ifinfomsg *
link_req (struct sr_nl_req *r, uint16_t type, int index)
{
  struct ifinfomsg *ifi;

  sr_nl_req_init (r, type, 0);
  ifi = sr_nl_req_put (r, sizeof *ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  return ifi;
}

/* The link called `name`, or with index `index` when name is NULL.
 * Returns 0, or -1 (ENODEV in the error when there is none). */
static int
link_get (int nl, const char *name, int index, struct link_info *out,
          sr_error **err)
{
  struct sr_nl_req r;

  memset (out, 0, sizeof *out);
  link_req (&r, RTM_GETLINK, name == NULL ? index : 0);
  if (name != NULL)
    sr_nl_req_attr_str (&r, IFLA_IFNAME, name);
  if (sr_nl_call (nl, &r, link_reply, out, err) < 0)
    return -1;
  if (out->index <= 0)
    return sr_fail (err, ENODEV, "netlink: no link in the answer");
  return 0;
}

static int
link_set_up (int nl, int index, bool up, sr_error **err)
{
  struct sr_nl_req r;
  struct ifinfomsg *ifi = link_req (&r, RTM_NEWLINK, index);

  ifi->ifi_flags = up ? IFF_UP : 0;
  ifi->ifi_change = IFF_UP;
  return sr_nl_call (nl, &r, NULL, NULL, err);
}

/* Move the link `index` (seen through `nl`) into the namespace `ns_fd`,
 * named `name` there. */
static int
link_move (int nl, int index, int ns_fd, const char *name, sr_error **err)
{
  struct sr_nl_req r;

  link_req (&r, RTM_NEWLINK, index);
  sr_nl_req_attr_u32 (&r, IFLA_NET_NS_FD, (uint32_t) ns_fd);
  sr_nl_req_attr_str (&r, IFLA_IFNAME, name);
  return sr_nl_call (nl, &r, NULL, NULL, err);
}

/* ---- addresses ---- */

/* What RTM_NEWADDR needs to add an address again. */
struct saved_addr
{
  unsigned char family, prefixlen;
  uint32_t flags;
  unsigned char local[16], address[16], broadcast[16];
  unsigned char local_len, address_len, broadcast_len;
};

struct addr_list
{
  int index;
  struct saved_addr *v;
  size_t len;
};

/* The flags a user may set with RTM_NEWADDR; the others are the kernel's
 * (permanent, secondary, tentative, ...). */
#define ADDR_USER_FLAGS                                                       \
  (IFA_F_NODAD | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR                     \
   | IFA_F_NOPREFIXROUTE | IFA_F_MCAUTOJOIN)

static void
copy_addr_attr (const struct nlmsghdr *h, uint16_t type, unsigned char *dst,
                unsigned char *len)
{
  const struct rtattr *a = sr_nl_msg_attr (h, sizeof (struct ifaddrmsg), type);
  if (a != NULL && RTA_PAYLOAD (a) <= 16)
    {
      memcpy (dst, RTA_DATA (a), RTA_PAYLOAD (a));
      *len = (unsigned char) RTA_PAYLOAD (a);
    }
}

/* Permanent (IFA_F_PERMANENT) addresses of global scope only, as the spec
 * says: link-local and dynamic ones belong to the old namespace. */
static int
addr_collect (const struct nlmsghdr *h, void *data, sr_error **err)
{
  struct addr_list *l = data;
  const struct ifaddrmsg *ifa = NLMSG_DATA (h);
  const struct rtattr *fa;
  struct saved_addr s = { 0 };

  (void) err;
  if (h->nlmsg_type != RTM_NEWADDR || h->nlmsg_len < NLMSG_LENGTH (sizeof *ifa)
      || (int) ifa->ifa_index != l->index)
    return 0;
  fa = sr_nl_msg_attr (h, sizeof *ifa, IFA_FLAGS);
  s.flags = fa != NULL && RTA_PAYLOAD (fa) == 4
                ? *(const uint32_t *) RTA_DATA (fa)
                : ifa->ifa_flags;
  if (!(s.flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE)
    return 0;
  s.family = ifa->ifa_family;
  s.prefixlen = ifa->ifa_prefixlen;
  copy_addr_attr (h, IFA_LOCAL, s.local, &s.local_len);
  copy_addr_attr (h, IFA_ADDRESS, s.address, &s.address_len);
  copy_addr_attr (h, IFA_BROADCAST, s.broadcast, &s.broadcast_len);
  l->v = xrealloc (l->v, (l->len + 1) * sizeof *l->v);
  l->v[l->len++] = s;
  return 0;
}

static int
addr_list_read (int nl, struct addr_list *l, sr_error **err)
{
  struct sr_nl_req r;
  struct ifaddrmsg *ifa;

  sr_nl_req_init (&r, RTM_GETADDR, 0);
  ifa = sr_nl_req_put (&r, sizeof *ifa);
  ifa->ifa_family = AF_UNSPEC;
  return sr_nl_dump (nl, &r, addr_collect, l, err);
}

static int
addr_add (int nl, int index, const struct saved_addr *s, sr_error **err)
{
  struct sr_nl_req r;
  struct ifaddrmsg *ifa;

  sr_nl_req_init (&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
  ifa = sr_nl_req_put (&r, sizeof *ifa);
  ifa->ifa_family = s->family;
  ifa->ifa_prefixlen = s->prefixlen;
  ifa->ifa_scope = RT_SCOPE_UNIVERSE;
  ifa->ifa_index = (unsigned int) index;
  if (s->local_len)
    sr_nl_req_attr (&r, IFA_LOCAL, s->local, s->local_len);
  if (s->address_len)
    sr_nl_req_attr (&r, IFA_ADDRESS, s->address, s->address_len);
  if (s->broadcast_len)
    sr_nl_req_attr (&r, IFA_BROADCAST, s->broadcast, s->broadcast_len);
  sr_nl_req_attr_u32 (&r, IFA_FLAGS, s->flags & ADDR_USER_FLAGS);
  return sr_nl_call (nl, &r, NULL, NULL, err);
}

/* ---- namespaces ---- */

static bool
config_has_netns (const oci_config *cfg)
{
  const oci_linux *l = cfg->linux_;
  for (size_t i = 0; l != NULL && i < l->namespaces_len; i++)
    if (str_eq (l->namespaces[i].type, "network"))
      return true;
  return false;
}

static bool
same_file (int a, int b)
{
  struct stat sa, sb;
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

/* Enter the init's network namespace: by its pidfd (Linux 5.8), else by
 * the runtime's own /proc (the host's, not the container's). */
static int
enter_netns_of (pid_t pid, sr_error **err)
{
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  _cleanup_free_ char *path = NULL;
  _cleanup_close_ int fd = -1;

  if (pidfd >= 0 && setns (pidfd, CLONE_NEWNET) == 0)
    return 0;
  path = xasprintf ("/proc/%d/ns/net", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_fail (err, errno, "open \"%s\"", path);
  if (setns (fd, CLONE_NEWNET) < 0)
    return sr_fail (err, errno, "enter the container's network namespace");
  return 0;
}

/* A socket in the init's network namespace, made by entering it for a
 * moment (the runtime is single-threaded); the namespaces themselves as fds
 * from SIOCGSKNS. */
static int
open_container_side (pid_t pid, struct netns_pair *p, sr_error **err)
{
  p->host_ns = ioctl (p->host_nl, SIOCGSKNS);
  if (p->host_ns < 0)
    return sr_fail (err, errno, "the runtime's network namespace");
  if (enter_netns_of (pid, err) < 0)
    return -1;
  p->ct_nl = sr_nl_open (err);
  if (setns (p->host_ns, CLONE_NEWNET) < 0)
    {
      /* Hooks and everything else would run in the container's network
       * namespace: not a state to go on from. */
      sr_error_log ("cannot return to the runtime's network namespace");
      abort ();
    }
  if (p->ct_nl < 0)
    return -1;
  p->ct_ns = ioctl (p->ct_nl, SIOCGSKNS);
  if (p->ct_ns < 0)
    return sr_fail (err, errno, "the container's network namespace");
  if (same_file (p->ct_ns, p->host_ns))
    return sr_fail (err, 0,
                    "the container shares the runtime's network "
                    "namespace");
  return 0;
}

/* ---- one device ---- */

/* The kernel moves first and renames after: with the name taken inside, it
 * would leave the device there under its host name.  So the name, or for a
 * template (the kernel picks the number) the index the device keeps when it
 * is free, must be free inside before the move. */
static int
check_free_inside (const struct netns_pair *p, const char *name, int index,
                   sr_error **err)
{
  _cleanup_error_ sr_error *lookup = NULL;
  bool tmpl = strchr (name, '%') != NULL;
  struct link_info li;

  if (link_get (p->ct_nl, tmpl ? NULL : name, index, &li, &lookup) == 0)
    {
      if (tmpl)
        return sr_fail (err, 0,
                        "interface index %d is taken in the "
                        "container's network namespace",
                        index);
      return sr_fail (err, 0,
                      "\"%s\" exists in the container's network "
                      "namespace",
                      name);
    }
  if (lookup->errnum != ENODEV)
    return sr_fail (err, lookup->errnum, "look for \"%s\" in the container",
                    name);
  return 0;
}

/* After the move: by name, or by the index it kept for a template. */
static int
find_moved (const struct netns_pair *p, const char *name, int index,
            struct link_info *out, sr_error **err)
{
  if (strchr (name, '%') == NULL)
    return link_get (p->ct_nl, name, 0, out, err);
  return link_get (p->ct_nl, NULL, index, out, err);
}

/* Best effort after a failure: the device back on the host under its own
 * name, up again if it was.  `inside` is its index in the container, or 0
 * when unknown: then only the device that is plainly ours (host name and
 * index) is taken back. */
static void
undo_move (const struct netns_pair *p, const struct link_info *host,
           int inside)
{
  struct link_info li;

  if (inside == 0 && link_get (p->ct_nl, host->name, 0, &li, NULL) == 0
      && li.index == host->index)
    inside = li.index;
  if (inside > 0)
    link_move (p->ct_nl, inside, p->host_ns, host->name, NULL);
  if (host->flags & IFF_UP)
    link_set_up (p->host_nl, host->index, true, NULL);
}

/* Inside: the saved addresses, then up. */
static int
configure_moved (const struct netns_pair *p, const struct link_info *moved,
                 const struct addr_list *addrs, sr_error **err)
{
  for (size_t i = 0; i < addrs->len; i++)
    if (addr_add (p->ct_nl, moved->index, &addrs->v[i], err) < 0)
      return sr_wrap (err, "add an address again");
  if (link_set_up (p->ct_nl, moved->index, true, err) < 0)
    return sr_wrap (err, "set it up");
  return 0;
}

static int
move_device (const struct netns_pair *p, const char *host_name,
             const char *name, sr_error **err)
{
  struct addr_list addrs = { 0 };
  _cleanup_free_ struct saved_addr *addrs_v = NULL;
  struct link_info host, moved;

  if (link_get (p->host_nl, host_name, 0, &host, err) < 0)
    return sr_wrap (err, "no host interface \"%s\"", host_name);
  addrs.index = host.index;
  if (addr_list_read (p->host_nl, &addrs, err) < 0)
    return sr_wrap (err, "read the addresses of \"%s\"", host_name);
  addrs_v = addrs.v;
  if (check_free_inside (p, name, host.index, err) < 0)
    return sr_wrap (err, "move \"%s\"", host_name);
  /* Down while it changes hands, as runc does. */
  if ((host.flags & IFF_UP)
      && link_set_up (p->host_nl, host.index, false, err) < 0)
    return sr_wrap (err, "set \"%s\" down", host_name);
  if (link_move (p->host_nl, host.index, p->ct_ns, name, err) < 0)
    {
      undo_move (p, &host, 0);
      return sr_wrap (err, "move \"%s\" into the container as \"%s\"",
                      host_name, name);
    }
  if (find_moved (p, name, host.index, &moved, err) < 0)
    {
      undo_move (p, &host, -1);
      return sr_wrap (err, "\"%s\" after the move", name);
    }
  if (configure_moved (p, &moved, &addrs, err) < 0)
    {
      undo_move (p, &host, moved.index);
      return sr_wrap (err, "\"%s\" (\"%s\" inside)", host_name, moved.name);
    }
  sr_debug ("netDevices: \"%s\" moved in as \"%s\" with %zu address(es)",
            host_name, moved.name, addrs.len);
  return 0;
}

int
sr_net_devices_move (const oci_config *cfg, pid_t init_pid, sr_error **err)
{
  const oci_linux *l = cfg->linux_;
  __attribute__ ((cleanup (netns_pair_clear))) struct netns_pair p
      = { .host_nl = -1, .ct_nl = -1, .host_ns = -1, .ct_ns = -1 };

  if (l == NULL || l->net_devices_len == 0)
    return 0;
  for (size_t i = 0; i < l->net_devices_len; i++)
    if (check_ifname (l->net_devices[i].host_name, false,
                      "host interface name", err)
            < 0
        || check_ifname (container_name (&l->net_devices[i]), true, "name",
                         err)
               < 0)
      return -1;
  if (!config_has_netns (cfg))
    return sr_fail (err, 0,
                    "linux.netDevices: the container needs a "
                    "network namespace of its own");
  p.host_nl = sr_nl_open (err);
  if (p.host_nl < 0 || open_container_side (init_pid, &p, err) < 0)
    return sr_wrap (err, "linux.netDevices");
  for (size_t i = 0; i < l->net_devices_len; i++)
    if (move_device (&p, l->net_devices[i].host_name,
                     container_name (&l->net_devices[i]), err)
        < 0)
      return sr_wrap (err, "linux.netDevices");
  return 0;
}
