#!/usr/bin/env python3
"""The egress tests' upstream servers, run inside the test's own network
namespace: HTTP on :80, HTTPS on :443 (a self-signed certificate made with
openssl by the test), a TCP echo on :7.  Each HTTP(S) GET of /bytes/N
answers N bytes; every other path answers "hello from HOST".  Writes READY
to stdout once all listen, then serves until killed."""
import http.server
import socket
import socketserver
import ssl
import sys
import threading

addr, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path.startswith("/bytes/"):
            body = b"x" * int(self.path[7:])
        else:
            body = ("hello from %s\n" % self.headers.get("Host", "?")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(65536)
            if not data:
                return
            self.request.sendall(data)


class EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


plain = Server((addr, 80), Handler)
tls = Server((addr, 443), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
echo = EchoServer((addr, 7), Echo)
for s in (plain, tls, echo):
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("READY", flush=True)
threading.Event().wait()
