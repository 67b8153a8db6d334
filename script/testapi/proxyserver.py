"""A forward proxy for client tests: HTTP (absolute-form and CONNECT) and SOCKS5 on one port.

Usage: proxyserver.py --port PORT [--auth] [--certfile F --keyfile F]

The first byte of a connection tells the protocols apart: 0x05 opens SOCKS5 (RFC 1928, with
RFC 1929 username and password), anything else is HTTP. With --certfile the port speaks TLS
first (an HTTPS proxy). Every forwarded connection to a target is logged with the local port of
the proxy's own connection there, which the target sees as its peer's port: a test compares it
with the test API's `/echo` ("peer_port") to prove its request came through this proxy.

  GET /log                 (origin-form, to the proxy itself) the log as JSON, newest last
  CONNECT host:port        a tunnel; 407 without the credentials (--auth), 403 for the
                           host "blocked.test", 502 when the target cannot be reached
  GET http://host:port/p   forwarded in origin-form with "Connection: close"; Proxy-* fields
                           are not passed on; 407 without the credentials (--auth), 403
                           for "blocked.test"
  SOCKS5                   CONNECT by IPv4, IPv6 or name; username and password chosen whenever
                           the client offers it (the only method with --auth); "not allowed"
                           (2) for "blocked.test"; "connection refused" (5) when the target
                           cannot be reached

Credentials: user "proxyuser", password "proxy-secret". Without --auth none are needed, and
any that are sent are still checked. Standard library only.
"""

import argparse
import asyncio
import base64
import ipaddress
import json
import signal
import ssl

USER = "proxyuser"
PASSWORD = "proxy-secret"
HEAD_LIMIT = 64 * 1024
LOG_LIMIT = 2000
BLOCKED = "blocked.test"
GONE = (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError,
        ssl.SSLError)

log = []


def record(kind, target, user, upstream):
    log.append({"kind": kind, "target": target, "user": user,
                "outbound_port": upstream.get_extra_info("sockname")[1]})
    del log[:-LOG_LIMIT]


async def pipe(reader, writer):
    try:
        while data := await reader.read(64 * 1024):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except GONE:
        pass


async def relay(client_reader, client_writer, upstream_reader, upstream_writer):
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
    upstream_writer.close()


def basic_user(value):
    """The user of a valid `Basic` credential, "" for none, None for a wrong one."""
    if value is None:
        return ""
    scheme, _, token = value.partition(" ")
    try:
        user, _, password = base64.b64decode(token.strip()).decode().partition(":")
    except ValueError:
        return None
    return user if scheme.lower() == "basic" and (user, password) == (USER, PASSWORD) else None


async def answer(writer, status, reason, body=b"", extra=""):
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n{extra}\r\n".encode() + body)
    await writer.drain()


async def connect_upstream(writer, host, port):
    """A connection to the target, or None once the client got 403 (blocked) or 502 (unreachable)."""
    if host == BLOCKED:
        return await answer(writer, 403, "Forbidden")
    try:
        return await asyncio.open_connection(host.strip("[]"), int(port))
    except (OSError, ValueError):
        return await answer(writer, 502, "Bad Gateway")


async def http(first, reader, writer, needs_auth):
    head = first + await reader.readuntil(b"\r\n\r\n")
    if len(head) > HEAD_LIMIT:
        return await answer(writer, 431, "Request Header Fields Too Large")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = (lines[0].split(" ") + ["", ""])[:3]
    fields = [line.split(":", 1) for line in lines[1:] if ":" in line]
    if method == "GET" and target == "/log":
        return await answer(writer, 200, "OK", json.dumps(log).encode(),
                            "Content-Type: application/json\r\n")
    user = basic_user(next((v.strip() for k, v in fields if k.lower() == "proxy-authorization"), None))
    if user is None or (needs_auth and not user):
        return await answer(writer, 407, "Proxy Authentication Required", b"proxy credentials needed",
                            'Proxy-Authenticate: Basic realm="test proxy"\r\n')
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        if (upstream := await connect_upstream(writer, host, port)) is None:
            return
        upstream_reader, upstream_writer = upstream
        record("connect", target, user, upstream_writer)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        return await relay(reader, writer, upstream_reader, upstream_writer)
    if not target.startswith("http://"):
        return await answer(writer, 400, "Bad Request")
    authority, slash, path = target[len("http://"):].partition("/")
    host, _, port = authority.rpartition(":") if authority.count(":") == 1 or "]:" in authority \
        else (authority, "", "80")
    if (upstream := await connect_upstream(writer, host, port)) is None:
        return
    upstream_reader, upstream_writer = upstream
    record("http", target, user, upstream_writer)
    kept = [f"{k}:{v}" for k, v in fields
            if k.lower() not in ("proxy-authorization", "proxy-connection", "connection", "keep-alive")]
    upstream_writer.write("\r\n".join([f"{method} /{path if slash else ''} {version}", *kept,
                                       "Connection: close", "", ""]).encode("latin-1"))
    await relay(reader, writer, upstream_reader, upstream_writer)


async def socks5(reader, writer, needs_auth):
    count = (await reader.readexactly(1))[0]
    methods = await reader.readexactly(count)
    method = 2 if needs_auth or 2 in methods else 0
    if method not in methods:
        writer.write(b"\x05\xff")
        return
    writer.write(bytes([5, method]))
    user = ""
    if method == 2:
        _, length = await reader.readexactly(2)
        name = (await reader.readexactly(length)).decode("latin-1")
        length = (await reader.readexactly(1))[0]
        password = (await reader.readexactly(length)).decode("latin-1")
        if (name, password) != (USER, PASSWORD):
            writer.write(b"\x01\x01")
            return
        writer.write(b"\x01\x00")
        user = name
    _, command, _, kind = await reader.readexactly(4)
    if kind == 1:
        host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
    elif kind == 4:
        host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
    else:
        host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("latin-1")
    port = int.from_bytes(await reader.readexactly(2), "big")
    if host == BLOCKED:
        writer.write(b"\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00")
        return
    if command != 1:
        writer.write(b"\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00")
        return
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    except OSError:
        writer.write(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
        return
    record("socks5", f"{host}:{port}", user, upstream_writer)
    writer.write(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + port.to_bytes(2, "big"))
    await writer.drain()
    await relay(reader, writer, upstream_reader, upstream_writer)


def serve(needs_auth):
    async def handle(reader, writer):
        try:
            first = await reader.readexactly(1)
            if first == b"\x05":
                await socks5(reader, writer, needs_auth)
            else:
                await http(first, reader, writer, needs_auth)
            await writer.drain()
        except GONE:
            pass
        finally:
            writer.close()
    return handle


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--certfile")
    parser.add_argument("--keyfile")
    args = parser.parse_args()
    context = None
    if args.certfile:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.certfile, args.keyfile)
    server = await asyncio.start_server(serve(args.auth), args.host, args.port, ssl=context,
                                        limit=HEAD_LIMIT * 2)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
