"""Raw TCP "fault server": misbehaving HTTP responses for client tests.

Usage: faultserver.py --port PORT [--host 127.0.0.1]

Reads the request head (up to the blank line, at most 64 KB), then acts on
the request path:
  /garbage       200 random bytes that are not HTTP, then close
  /close         close at once without writing anything
  /hang          never answer; keep the connection until the client leaves
  /partial       200 head with Content-Length: 100000, 1000 bytes, then close
  /stall        200 head with Content-Length: 100000, 1000 bytes, then silence
                 until the client leaves (a server gone quiet mid-body)
  /huge          200 head with Content-Length: 10 GiB, stream zeros forever
  /bad-status    "HTTP/1.1 abc Nope" head, then close
  /slow-headers  one byte of a response head every 0.5 s, forever
  /bad-chunked   200 head with Transfer-Encoding: chunked, one valid chunk
                 (size 5, "hello"), then a chunk-size line "zz" (not hex)
                 followed by some text, then close (no last chunk)
  /header-flood  200 status line, Content-Length: 2, then 200,000 header
                 lines "X-Flood-<n>: x" (about 3.7 MB of head), the blank line,
                 body "ok", then close; streamed, never built in memory
  /huge-header   200 status line, Content-Length: 2, one header "X-Huge" whose
                 value is 64 MiB of "a", the blank line, body "ok", then close;
                 streamed
  /cut-body      200 head with Content-Length: 100000, 50000 bytes, then close
  /quiet-events  200 text/event-stream (Connection: close, no length): one
                 event numbered after the request's Last-Event-ID (retry: 10,
                 id: n, data: n), then silence until the client leaves; 204
                 once Last-Event-ID is 2 or more (a server gone quiet)
  /trailers      200 chunked JSON body {"fault":"none"} followed by trailer
                 fields (Content-Type: text/html, Set-Cookie: trailer=1,
                 X-Checksum: 42), then close
  /control-bytes 200 {"fault":"none"} whose ETag and Last-Modified lines end in
                 a bare CR before the CRLF ("v1"<CR><CR><LF>), with
                 Cache-Control: no-cache; the same on every request
  anything else  200 {"fault":"none"} with Connection: close
Standard library only. Client disconnects are expected and never logged.
"""

import argparse
import asyncio
import os
import signal

HEAD_LIMIT = 64 * 1024
CHUNK = bytes(64 * 1024)
HUGE_LENGTH = 10 * 1024 ** 3
FLOOD_HEADERS = 200_000
FLOOD_BATCH = 2_000  # header lines per write
HUGE_HEADER_LENGTH = 64 * 1024 ** 2
# Errors that just mean "the client went away".
GONE = (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError)
# Open connections (handler task -> Client), so shutdown can end them cleanly.
CLIENTS = {}


class Client:
    """One accepted connection and a flag set once the peer has left."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.head = b""  # the request head, once read
        self.gone = asyncio.Event()

    async def watch_for_eof(self):
        """Consumes (and ignores) input until the peer closes the connection."""
        try:
            while await self.reader.read(65536):
                pass
        except GONE:
            pass
        self.gone.set()

    async def send(self, data):
        """Writes and waits for the buffer to drain; False once the peer is gone."""
        if self.gone.is_set() or self.writer.is_closing():
            return False
        try:
            self.writer.write(data)
            await self.writer.drain()
        except GONE:
            self.gone.set()
            return False
        return True

    async def sleep(self, seconds):
        """Sleeps; returns False early if the peer leaves meanwhile."""
        try:
            await asyncio.wait_for(self.gone.wait(), seconds)
            return False
        except asyncio.TimeoutError:
            return True


def head(status_line, headers):
    lines = [status_line] + [f"{k}: {v}" for k, v in headers] + ["", ""]
    return "\r\n".join(lines).encode("latin-1")


async def garbage(client):
    data = bytearray(os.urandom(200))
    data[0:4] = b"\x00\xff\x13\x37"  # never mistaken for "HTTP/"
    await client.send(bytes(data))


async def close(client):
    pass


async def hang(client):
    await client.gone.wait()


async def partial(client):
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "application/octet-stream"),
                                 ("Content-Length", "100000")])
    )
    await client.send(bytes(1000))


async def stall(client):
    await partial(client)
    await client.gone.wait()


async def huge(client):
    ok = await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "application/octet-stream"),
                                 ("Content-Length", str(HUGE_LENGTH))])
    )
    sent = 0
    while ok and sent < HUGE_LENGTH:
        ok = await client.send(CHUNK)
        sent += len(CHUNK)


async def bad_status(client):
    await client.send(b"HTTP/1.1 abc Nope\r\n\r\n")


async def slow_headers(client):
    def endless_head():
        yield from b"HTTP/1.1 200 OK\r\n"
        n = 0
        while True:
            n += 1
            yield from f"X-Slow-{n}: waiting\r\n".encode()

    for byte in endless_head():
        if not await client.send(bytes([byte])) or not await client.sleep(0.5):
            return


async def bad_chunked(client):
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "text/plain"),
                                 ("Transfer-Encoding", "chunked")])
        + b"5\r\nhello\r\n"
        + b"zz\r\nthis chunk size is not hex\r\n"
    )


async def header_flood(client):
    ok = await client.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n")
    n = 0
    while ok and n < FLOOD_HEADERS:
        count = min(FLOOD_BATCH, FLOOD_HEADERS - n)
        ok = await client.send(
            "".join(f"X-Flood-{i}: x\r\n" for i in range(n + 1, n + count + 1)).encode()
        )
        n += count
    if ok:
        await client.send(b"\r\nok")


async def huge_header(client):
    ok = await client.send(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nX-Huge: "
    )
    piece = b"a" * len(CHUNK)
    sent = 0
    while ok and sent < HUGE_HEADER_LENGTH:
        ok = await client.send(piece[:HUGE_HEADER_LENGTH - sent])
        sent += len(piece)
    if ok:
        await client.send(b"\r\n\r\nok")


async def cut_body(client):
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "application/octet-stream"),
                                 ("Content-Length", "100000")])
    )
    await client.send(bytes(50000))


def header_value(request_head, name):
    """A request header's value (name in lower case), or None."""
    for line in request_head.split(b"\r\n")[1:]:
        field, _, value = line.partition(b":")
        if field.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


async def quiet_events(client):
    last = header_value(client.head, b"last-event-id") or "0"
    number = int(last) + 1 if last.isascii() and last.isdigit() and len(last) < 10 else 1
    if number > 2:
        await client.send(head("HTTP/1.1 204 No Content", [("Connection", "close")]))
        return
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "text/event-stream"), ("Connection", "close")])
        + f"retry: 10\nid: {number}\ndata: {number}\n\n".encode()
    )
    await client.gone.wait()


async def no_fault(client):
    body = b'{"fault":"none"}'
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "application/json"),
                                 ("Content-Length", str(len(body))),
                                 ("Connection", "close")]) + body
    )


async def trailers(client):
    body = b'{"fault":"none"}'
    await client.send(
        head("HTTP/1.1 200 OK", [("Content-Type", "application/json"),
                                 ("Transfer-Encoding", "chunked"),
                                 ("Trailer", "Content-Type, Set-Cookie, X-Checksum"),
                                 ("Connection", "close")])
        + f"{len(body):x}\r\n".encode() + body + b"\r\n"
        + b"0\r\nContent-Type: text/html\r\nSet-Cookie: trailer=1\r\nX-Checksum: 42\r\n\r\n"
    )


async def control_bytes(client):
    body = b'{"fault":"none"}'
    await client.send(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
        + b'ETag: "v1"\r\r\nLast-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\r\n'
        + b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n" + body
    )


ROUTES = {
    "/garbage": garbage,
    "/close": close,
    "/hang": hang,
    "/partial": partial,
    "/stall": stall,
    "/huge": huge,
    "/bad-status": bad_status,
    "/slow-headers": slow_headers,
    "/bad-chunked": bad_chunked,
    "/header-flood": header_flood,
    "/huge-header": huge_header,
    "/cut-body": cut_body,
    "/quiet-events": quiet_events,
    "/trailers": trailers,
    "/control-bytes": control_bytes,
}


def request_path(request_head):
    """The path of the request line, without the query string."""
    first_line = request_head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = first_line.split(" ")
    target = parts[1] if len(parts) >= 2 else "/"
    return target.split("?", 1)[0]


async def handle(reader, writer):
    client = Client(reader, writer)
    task = asyncio.current_task()
    CLIENTS[task] = client
    watcher = None
    try:
        request_head = await reader.readuntil(b"\r\n\r\n")
        client.head = request_head
        watcher = asyncio.ensure_future(client.watch_for_eof())
        await ROUTES.get(request_path(request_head), no_fault)(client)
    except GONE:
        pass  # bad head, head too large, or the client left
    finally:
        CLIENTS.pop(task, None)
        if watcher is not None:
            watcher.cancel()
        try:
            writer.close()
            await writer.wait_closed()
        except GONE:
            pass


def quiet_exception_handler(loop, context):
    """Drops the loop's reports about connections the client broke."""
    if isinstance(context.get("exception"), GONE):
        return
    loop.default_exception_handler(context)


async def serve(host, port):
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(quiet_exception_handler)
    server = await asyncio.start_server(handle, host, port, limit=HEAD_LIMIT)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"fault server listening on {host}:{port}", flush=True)
    await stop.wait()
    server.close()
    # Drop the open connections so their handlers return normally instead of
    # being cancelled (which would print tracebacks on Python 3.11).
    for client in CLIENTS.values():
        client.gone.set()
        client.writer.transport.abort()
    if CLIENTS:
        await asyncio.wait(list(CLIENTS), timeout=2)
    print("fault server stopped", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
