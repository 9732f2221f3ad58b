#!/usr/bin/python3
"""A minimal CRI client: one call of the Kubernetes CRI API (runtime.v1) to a
containerd socket, as the kubelet makes it.

    cri.py SOCKET SERVICE/METHOD [REQUEST-JSON]   prints the response as JSON

e.g. cri.py /tmp/x/containerd.sock RuntimeService/Version '{}'.

The message definitions are not vendored: they are read from the containerd
binary that serves them.  Go's protobuf registry embeds each .proto file's
descriptor, gzip-compressed, in the binary; the one whose package is
runtime.v1 is the CRI API this containerd speaks.  Its gogoproto options are
kept as unknown fields, and the import of gogo.proto is dropped (only the
options use it).  Needs python3-grpcio (and python3-protobuf, its dependency).
"""

import json
import os
import shutil
import sys
import zlib

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
from google.protobuf import message_factory

GZIP_MAGIC = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
CRI_PACKAGE = "runtime.v1"


def cri_file_descriptor(binary):
    """The FileDescriptorProto of package runtime.v1 embedded in BINARY."""
    with open(binary, "rb") as f:
        data = f.read()
    pos = data.find(GZIP_MAGIC)
    while pos >= 0:
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(
                data[pos : pos + (4 << 20)]
            )
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
            if fd.package == CRI_PACKAGE and fd.service:
                return fd
        except Exception:  # not a descriptor: keep looking
            pass
        pos = data.find(GZIP_MAGIC, pos + 1)
    sys.exit(f"cri.py: no {CRI_PACKAGE} descriptor in {binary}")


def load_api(binary):
    fd = cri_file_descriptor(binary)
    del fd.dependency[:]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return pool, pool.FindFileByName(fd.name)


def message_class(desc):
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(desc.file.pool).GetPrototype(desc)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    socket, name = sys.argv[1], sys.argv[2]
    request_json = sys.argv[3] if len(sys.argv) == 4 else "{}"
    binary = os.environ.get("CONTAINERD") or shutil.which("containerd")
    if not binary:
        sys.exit("cri.py: containerd not found (set CONTAINERD)")
    _, fdesc = load_api(binary)
    service_name, _, method_name = name.partition("/")
    service = fdesc.services_by_name.get(service_name)
    method = service and service.methods_by_name.get(method_name)
    if method is None:
        sys.exit(f"cri.py: no method {name} in {CRI_PACKAGE}")
    req_cls = message_class(method.input_type)
    resp_cls = message_class(method.output_type)
    request = json_format.Parse(request_json, req_cls())
    timeout = float(os.environ.get("CRI_TIMEOUT", "60"))
    with grpc.insecure_channel("unix://" + socket) as channel:
        call = channel.unary_unary(
            f"/{CRI_PACKAGE}.{service_name}/{method_name}",
            request_serializer=req_cls.SerializeToString,
            response_deserializer=resp_cls.FromString,
        )
        try:
            response = call(request, timeout=timeout)
        except grpc.RpcError as e:
            sys.exit(f"cri.py: {name}: {e.code().name}: {e.details()}")
    print(
        json_format.MessageToJson(
            response, indent=None, including_default_value_fields=True
        )
    )


if __name__ == "__main__":
    main()
