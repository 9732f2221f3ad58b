/* The egress gateway's state, shared by its parts: the event loop
 * (loop.c), TCP connections (conn.c, relay.c), the DNS stub (dns.c), name
 * resolution (resolve.c) and the record of attempts (record.c). */
#ifndef SANDRUN_EGRESS_GATEWAY_H
#define SANDRUN_EGRESS_GATEWAY_H

#include <ares.h>
#include <stdbool.h>
#include <stdint.h>

#include "egress/netns.h"
#include "egress/parse.h"
#include "sandbox/egress_policy.h"

#define EG_CONN_MAX 256    /* concurrent TCP connections */
#define EG_RELAY_BUF 65536 /* per direction */
#define EG_ADDRS_MAX 8
#define EG_HEAD_TIMEOUT_MS 5000 /* a whole request head, or a ClientHello */
#define EG_SNIFF_MS 1000        /* silence before a raw TCP client is served */
#define EG_CONNECT_TIMEOUT_MS 10000
#define EG_IDLE_TIMEOUT_MS 300000
#define EG_DNSMAP_MAX 1024
#define EG_RECORDS_MAX 10000
#define EG_DNS_LOOKUPS_MAX 256 /* DNS queries waiting for an upstream answer */
#define EG_MARKS_MAX 64        /* mark requests waiting for their line */
#define EG_MARK_TOKEN_MAX 64
#define EG_MARK_SETTLE_MS 1000 /* at most, for finished clients' records */

enum eg_ev_kind
{
  EV_PROXY,
  EV_TRANSPARENT,
  EV_DNS,
  EV_CONTROL,
  EV_SIGNAL,
  EV_ARES,
  EV_CLIENT,
  EV_UPSTREAM,
};

struct eg_ev
{
  enum eg_ev_kind kind;
  int fd;
  void *p;
  uint32_t mask;      /* registered events (0: not registered) */
  struct eg_ev *next; /* ares sockets: their list */
};

enum eg_proto
{
  PROTO_TCP,
  PROTO_HTTP,
  PROTO_HTTPS,
  PROTO_DNS,
};

/* One attempt, as the receipt lists it. */
struct eg_record
{
  char *time;
  enum eg_proto proto;
  char host[EG_NAME_MAX + 1];
  uint16_t port;
  struct eg_addr address;
  bool has_address;
  bool denied;
  char reason[320];
  uint64_t bytes_out, bytes_in;
  int64_t start_ms;
};

enum eg_state
{
  ST_HEAD,    /* reading the request head / first bytes */
  ST_RESOLVE, /* waiting for c-ares */
  ST_CONNECT, /* connecting upstream */
  ST_HELLO,   /* after CONNECT: reading the first bytes inside the tunnel */
  ST_RELAY,
};

struct eg_buf
{
  char *data;
  size_t len, off;
};

struct eg_conn
{
  struct eg_conn *prev, *next;
  struct gateway *gw;
  struct eg_ev cev, uev;
  enum eg_state state;
  bool transparent;
  bool closed;    /* recorded and unlinked, freed by the loop's sweep */
  bool resolving; /* c-ares holds it: not freed before its callback */
  struct eg_record rec;
  struct eg_addr orig; /* the transparent connection's destination */
  bool is_connect;     /* an HTTP CONNECT tunnel */
  bool http_client;    /* the client speaks HTTP: errors are HTTP answers */
  bool counted;        /* counted against --net-max-connections */
  bool by_address;     /* no name: decided by the destination address */
  bool declared;       /* the addresses come from --add-host */
  char head[EG_HEAD_MAX + 8]; /* + a TLS record header */
  size_t head_len;
  struct eg_addr addrs[EG_ADDRS_MAX];
  size_t n_addrs, next_addr;
  struct eg_buf c2u, u2c; /* client to upstream, upstream to client */
  bool c_eof, u_eof, u_shut, c_shut;
  int64_t deadline;
};

struct eg_dns_pending;

struct gateway
{
  struct eg_policy *pol;
  struct eg_netns ns;
  int ep;
  int log_fd;
  ares_channel ares;
  struct eg_ev ev_proxy, ev_transparent, ev_dns, ev_control, ev_signal;
  struct eg_ev *ares_evs;
  struct eg_conn *conns;
  size_t n_conns;
  struct eg_conn *graveyard; /* closed, freed once no event can name them */
  uint64_t max_bytes, max_conns; /* 0: no limit */
  uint64_t bytes_total, conns_opened;
  bool bytes_cap_hit, conns_cap_hit;
  size_t n_records, n_unrecorded;
  struct
  {
    char name[EG_NAME_MAX + 1];
    struct eg_addr addr;
    bool declared;
  } dnsmap[EG_DNSMAP_MAX];
  size_t n_dnsmap, dnsmap_next;
  size_t n_dns_lookups; /* DNS queries waiting for c-ares */
  /* the control socket's partial line, and the marks asked for (control.c) */
  char ctl_buf[EG_MARK_TOKEN_MAX + 16];
  size_t ctl_len;
  char marks[EG_MARKS_MAX][EG_MARK_TOKEN_MAX + 1];
  size_t n_marks;
  int64_t marks_deadline;
  bool stopping;
};

/* loop.c */
void eg_ev_set (struct gateway *gw, struct eg_ev *ev, uint32_t mask);
int64_t eg_now (void);

/* conn.c */
void eg_conn_accept (struct gateway *gw, int lfd, bool transparent);
void eg_conn_event (struct eg_conn *c, bool upstream, uint32_t events);
void eg_conn_timeout (struct eg_conn *c);
void eg_conn_close (struct eg_conn *c);
void eg_conns_sweep (struct gateway *gw, bool all);
void eg_conn_resolved (struct eg_conn *c, int status,
                       const struct eg_addr *addrs, size_t n);
/* relay.c */
void eg_relay_event (struct eg_conn *c, bool upstream, uint32_t events);
void eg_conn_update (struct eg_conn *c);
void eg_conns_close_all (struct gateway *gw, const char *reason);

/* dns.c */
void eg_dns_readable (struct gateway *gw);
void eg_dnsmap_add (struct gateway *gw, const char *name,
                    const struct eg_addr *a, bool declared);
const char *eg_dnsmap_find (struct gateway *gw, const struct eg_addr *a,
                            bool *declared);

/* resolve.c: AF_UNSPEC lookup through c-ares (DNS only, never the host's
 * /etc/hosts); `cb` gets an ares status and the addresses. */
typedef void (*eg_resolve_cb) (void *arg, int status,
                               const struct eg_addr *addrs, size_t n);
int eg_resolve_init (struct gateway *gw, sr_error **err);
void eg_resolve (struct gateway *gw, const char *name, eg_resolve_cb cb,
                 void *arg);
void eg_resolve_event (struct gateway *gw, struct eg_ev *ev, uint32_t events);
int eg_resolve_timeout_ms (struct gateway *gw);
void eg_resolve_tick (struct gateway *gw);

/* The checks every resolved address list goes through: drops the forbidden
 * ones (their reason into `why`), keeps the rest; returns how many remain. */
size_t eg_filter_addrs (struct gateway *gw, const char *name, uint16_t port,
                        bool declared, struct eg_addr *addrs, size_t n,
                        char *why, size_t why_len);

/* control.c */
void eg_control_readable (struct gateway *gw, int fd);
int eg_marks_timeout (struct gateway *gw, int timeout);
void eg_marks_flush (struct gateway *gw, bool idle);

/* record.c */
void eg_record_start (struct eg_record *r, enum eg_proto proto);
void eg_record_write (struct gateway *gw, struct eg_record *r);
void eg_record_summary (struct gateway *gw);
void eg_record_mark (struct gateway *gw, const char *token);
char *eg_record_json (const struct eg_record *r, int64_t now_ms);

#endif
