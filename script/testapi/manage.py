"""Starts and stops the local test servers (entry point of script/server).

Usage: manage.py start|stop|restart|status|env

Everything lives in <repo>/.servers: certificates, pid files, logs, the
`env` file with the server URLs, and www/ (the files the plain-HTTP nginx
serves, rewritten at each start; uploads land in www/uploads/). Standard
library only, so `stop`, `status` and `env` work even without the virtualenv.
Progress goes to stderr; `start` and `env` print the env lines on stdout.
"""

import fcntl
import grp
import hashlib
import http.client
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTAPI = os.path.join(ROOT, "script", "testapi")
SERVERS = os.path.join(ROOT, ".servers")
ENV_FILE = os.path.join(SERVERS, "env")
VENV_BIN = os.path.join(ROOT, ".venv", "bin")

READY_TIMEOUT = 20.0
POLL_INTERVAL = 0.1
STOP_TIMEOUT = 6.0
# The ports are free when chosen but bound only when each server has started, so another process
# can take one in between; a start that lost a port tries again with new ones.
START_ATTEMPTS = 3


@dataclass
class Server:
    name: str         # stem of .servers/<name>.pid and .log
    env_key: str      # variable holding its URL in .servers/env
    scheme: str       # http, https or tcp (fault server)
    url_suffix: str   # appended to scheme://127.0.0.1:port in the env file
    health_path: str  # GET this must answer 200 once the server is up
    threads: int = 0
    cert: str = ""    # stem of the certificate in .servers for https
    client_auth: bool = False  # https that requires a client certificate from the test CA
    app: str = "app:app"

    def url(self, port):
        scheme = "http" if self.scheme == "tcp" else self.scheme
        return f"{scheme}://127.0.0.1:{port}{self.url_suffix}"


API_HEALTH = "/api/v1/health"
SERVER_LIST = [
    Server("api", "NETWORKING_TEST_API_URL", "http", "/api/v1", API_HEALTH, 64),
    Server("api-tls", "NETWORKING_TEST_API_TLS_URL", "https", "/api/v1", API_HEALTH, 64, "server"),
    Server("httpbin", "NETWORKING_TEST_HTTPBIN_URL", "http", "", "/get", 32, app="httpbin:app"),
    Server("tls-expired", "NETWORKING_TEST_TLS_EXPIRED_URL", "https", "/api/v1", API_HEALTH, 4,
           "expired"),
    Server("tls-wrong-host", "NETWORKING_TEST_TLS_WRONG_HOST_URL", "https", "/api/v1", API_HEALTH,
           4, "wronghost"),
    # The test API over TLS that requires a client certificate signed by the test CA (mutual TLS).
    Server("api-mtls", "NETWORKING_TEST_MTLS_URL", "https", "/api/v1", API_HEALTH, 8, "server",
           client_auth=True),
    Server("fault", "NETWORKING_TEST_FAULT_URL", "tcp", "", ""),
    # Forward proxies (HTTP and SOCKS5 on one port, see proxyserver.py): open, requiring
    # credentials, and over TLS (an HTTPS proxy).
    Server("proxy", "NETWORKING_TEST_PROXY_URL", "http", "", "/log", app="proxy"),
    Server("proxy-auth", "NETWORKING_TEST_PROXY_AUTH_URL", "http", "", "/log", app="proxy"),
    Server("proxy-tls", "NETWORKING_TEST_PROXY_TLS_URL", "https", "", "/log", cert="server", app="proxy"),
    # nginx over TLS with HTTP/2 (ALPN): /protocol answers the protocol the request came in with.
    Server("nginx-h2", "NETWORKING_TEST_H2_URL", "https", "", "/health", cert="server", app="nginx"),
    # nginx over plain HTTP: static files of .servers/www (ranges and validators by nginx
    # itself) and WebDAV PUT/DELETE under /uploads/ (see NGINX_HTTP_CONF).
    Server("nginx", "NETWORKING_TEST_NGINX_URL", "http", "", "/health", app="nginx"),
]

NGINX_H2_CONF = """worker_processes 1;
daemon off;
pid "{prefix}/nginx.pid";
error_log "{prefix}/error.log" warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path "{prefix}/body";
    proxy_temp_path "{prefix}/proxy";
    fastcgi_temp_path "{prefix}/fastcgi";
    uwsgi_temp_path "{prefix}/uwsgi";
    scgi_temp_path "{prefix}/scgi";
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate "{cert}";
        ssl_certificate_key "{key}";
        default_type text/plain;
        location = /health {{ return 200 "ok"; }}
        location = /protocol {{ return 200 "$server_protocol"; }}
        # Trailer fields in HTTP/2's closing HEADERS frame (nginx sends them after a file, not
        # after a `return`): a client must not merge them into the head (RFC 9110 section 6.5.1).
        location = /trailers {{
            add_trailer X-Checksum "sha-256=abc";
            add_trailer Content-Type "text/evil";
            add_trailer Set-Cookie "trailer=1";
            alias "{prefix}/trailers.txt";
        }}
    }}
}}
"""

# Plain-HTTP nginx serving WWW (.servers/www, filled by prepare_www). Static
# files get ETag, Last-Modified, Accept-Ranges, single and multiple ranges,
# If-Range, If-None-Match and If-Modified-Since from nginx itself
# (If-Modified-Since: 304 when Last-Modified <= the date, not only on an exact
# match). /uploads/ also takes PUT (201 Created, 204 when replacing; missing
# folders created; no size limit; chunked bodies accepted) and DELETE (204),
# stored in WWW/uploads/ so they can be fetched back. /echo-method answers the
# request method. Access log: .servers/nginx.access.log. It also listens on a
# Unix domain socket (nginx_socket_path, NETWORKING_TEST_NGINX_SOCKET). Paths are
# quoted: the checkout's may contain a space.
NGINX_HTTP_CONF = """{user}worker_processes 1;
daemon off;
pid "{prefix}/nginx.pid";
error_log "{prefix}/error.log" warn;
events {{ worker_connections 256; }}
http {{
    access_log "{access_log}";
    client_body_temp_path "{prefix}/body";
    proxy_temp_path "{prefix}/proxy";
    fastcgi_temp_path "{prefix}/fastcgi";
    uwsgi_temp_path "{prefix}/uwsgi";
    scgi_temp_path "{prefix}/scgi";
    types {{
        application/json json;
        text/plain txt;
        application/octet-stream bin;
    }}
    default_type application/octet-stream;
    sendfile on;
    if_modified_since before;  # RFC 9110: 304 when Last-Modified <= If-Modified-Since
    server {{
        listen 127.0.0.1:{port};
        listen "unix:{socket}";
        root "{www}";
        location = /health {{ default_type text/plain; return 200 "ok"; }}
        location = /echo-method {{ default_type text/plain; return 200 "$request_method"; }}
        location / {{ }}
        location /uploads/ {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            client_max_body_size 0;
        }}
    }}
}}
"""

WWW = os.path.join(SERVERS, "www")
# name -> size of the deterministic pseudo-random files written at start
WWW_BINARY_FILES = {"1m.bin": 1024 ** 2, "10m.bin": 10 * 1024 ** 2}
WWW_MTIME = 1704067200  # 2024-01-01T00:00:00Z: Last-Modified of the www files


def nginx_binary():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return "nginx"


def say(message):
    print(f"server: {message}", file=sys.stderr, flush=True)


def path_in_servers(name):
    return os.path.join(SERVERS, name)


def nginx_socket_path():
    """Where nginx also listens on a Unix domain socket: in .servers/, unless that
    path is too long for sockaddr_un (108 bytes), then in /tmp under a name
    derived from the checkout's path."""
    path = path_in_servers("nginx.sock")
    if len(path.encode()) < 100:
        return path
    digest = hashlib.sha256(SERVERS.encode()).hexdigest()[:16]
    return os.path.join("/tmp", f"networking-nginx-{digest}.sock")


# --- processes -------------------------------------------------------------

def proc_stat(pid):
    """(state, pgrp, start_time) of a process from /proc, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2]), fields[19]


def is_alive(pid):
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def group_alive(pgid, count_zombies=False):
    """True while a process (by default: a non-zombie one) is in group `pgid`."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat and stat[1] == pgid and (count_zombies or stat[0] not in ("Z", "X")):
                return True
    return False


def reap_children():
    """Collects exited children of this process (servers started by `start`)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def wait_for_groups(pgids, seconds, count_zombies=False):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reap_children()
        if not any(group_alive(p, count_zombies) for p in pgids):
            return
        time.sleep(0.05)


def read_pid(server):
    """The pid recorded for `server` if that very process still runs.

    The pid file also holds the process start time, so a recycled pid is
    never mistaken for our server."""
    try:
        with open(path_in_servers(server.name + ".pid")) as f:
            pid_text, start_time = f.read().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    stat = proc_stat(pid)
    if stat is None or stat[0] in ("Z", "X") or stat[2] != start_time:
        return None
    return pid


def write_pid(server, pid):
    stat = proc_stat(pid)
    with open(path_in_servers(server.name + ".pid"), "w") as f:
        f.write(f"{pid} {stat[2] if stat else 0}\n")


def free_ports(count):
    """Distinct free TCP ports on 127.0.0.1 (all held open until chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def write_atomically(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def prepare_www():
    """Writes the files the plain-HTTP nginx serves and empties www/uploads.

    small.json   a JSON document of about 2 KB (2,101 bytes)
    1m.bin       1 MiB  = SHAKE-256("networking-test www 1m.bin") (deterministic)
    10m.bin      10 MiB = SHAKE-256("networking-test www 10m.bin")
    sha256.txt   `sha256sum` lines ("<hex>  <name>") for the three files
    uploads/     empty folder, target of PUT /uploads/..."""
    os.makedirs(WWW, exist_ok=True)
    uploads = os.path.join(WWW, "uploads")
    shutil.rmtree(uploads, ignore_errors=True)
    os.makedirs(uploads)
    small = {
        "name": "small.json",
        "description": "A small static JSON document served by nginx for the client tests.",
        "items": [
            {"id": i, "title": f"Item {i}", "tags": ["static", "nginx", f"tag-{i % 5}"],
             "price": round(i * 1.25, 2), "available": i % 3 != 0}
            for i in range(1, 15)
        ],
    }
    files = {"small.json": (json.dumps(small, indent=1) + "\n").encode()}
    for name, size in WWW_BINARY_FILES.items():
        files[name] = hashlib.shake_256(f"networking-test www {name}".encode()).digest(size)
    for name, data in files.items():
        write_atomically(os.path.join(WWW, name), data)
        # A fixed mtime keeps nginx's Last-Modified and ETag the same at every start.
        os.utime(os.path.join(WWW, name), (WWW_MTIME, WWW_MTIME))
    listing = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in files.items())
    write_atomically(os.path.join(WWW, "sha256.txt"), listing.encode())
    os.utime(os.path.join(WWW, "sha256.txt"), (WWW_MTIME, WWW_MTIME))


def nginx_user_line():
    """Run as root, nginx would start its workers as `nobody`, who may not read
    .servers/www nor write uploads: keep them as the current user."""
    if os.geteuid() != 0:
        return ""
    return f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};\n"


def command_for(server, port):
    if server.app == "nginx":
        prefix = path_in_servers(server.name)
        os.makedirs(prefix, exist_ok=True)
        conf = os.path.join(prefix, "nginx.conf")
        if server.scheme == "https":
            with open(os.path.join(prefix, "trailers.txt"), "w") as f:
                f.write("trailered")
            text = NGINX_H2_CONF.format(prefix=prefix, port=port,
                                        cert=path_in_servers(server.cert + ".pem"),
                                        key=path_in_servers(server.cert + ".key"))
        else:
            prepare_www()
            # A socket left by a killed nginx would make the new one fail to bind.
            if os.path.exists(nginx_socket_path()):
                os.unlink(nginx_socket_path())
            text = NGINX_HTTP_CONF.format(user=nginx_user_line(), prefix=prefix, port=port,
                                          www=WWW, socket=nginx_socket_path(),
                                          access_log=path_in_servers(server.name + ".access.log"))
        with open(conf, "w") as f:
            f.write(text)
        return [nginx_binary(), "-p", prefix, "-c", conf, "-e", os.path.join(prefix, "error.log")]
    if server.app == "proxy":
        cmd = [os.path.join(VENV_BIN, "python"), os.path.join(TESTAPI, "proxyserver.py"),
               "--port", str(port)]
        if server.name == "proxy-auth":
            cmd.append("--auth")
        if server.cert:
            cmd += ["--certfile", path_in_servers(server.cert + ".pem"),
                    "--keyfile", path_in_servers(server.cert + ".key")]
        return cmd
    if server.scheme == "tcp":
        return [os.path.join(VENV_BIN, "python"), os.path.join(TESTAPI, "faultserver.py"),
                "--port", str(port)]
    cmd = [
        os.path.join(VENV_BIN, "gunicorn"),
        "--bind", f"127.0.0.1:{port}",
        "--workers", "1",  # state is in memory: exactly one process
        "--worker-class", "gthread",
        "--threads", str(server.threads),
        "--graceful-timeout", "2",
        "--keep-alive", "15",
        "--no-control-socket",  # else all instances share ~/.gunicorn/gunicorn.ctl
        "--access-logfile", path_in_servers(server.name + ".access.log"),
        "--chdir", TESTAPI,
    ]
    if server.cert:
        cmd += ["--certfile", path_in_servers(server.cert + ".pem"),
                "--keyfile", path_in_servers(server.cert + ".key")]
    if server.client_auth:
        cmd += ["--cert-reqs", str(int(ssl.CERT_REQUIRED)), "--ca-certs", path_in_servers("ca.pem")]
    return cmd + [server.app]


# Whether this command launched a server: only then does an interrupted start stop them (a
# start that found them running leaves another run's servers alone).
LAUNCHED = []


def launch(server, port):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    # No signal between the launch and its pid file: a server without one could not be stopped.
    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        return launch_recorded(server, port, env, signals)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def launch_recorded(server, port, env, signals):
    with open(path_in_servers(server.name + ".log"), "wb") as log:
        proc = subprocess.Popen(
            command_for(server, port),
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: stop kills workers too
            # The server must hear `stop`'s SIGTERM: it does not keep this command's mask.
            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, signals),
        )
    write_pid(server, proc.pid)
    LAUNCHED.append(server.name)
    return proc


# --- health checks ----------------------------------------------------------

def is_healthy(server, port, timeout=1.0):
    try:
        if server.scheme == "tcp":
            with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                return True
        if server.scheme == "https":
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            if server.client_auth:
                context.load_cert_chain(path_in_servers("client.pem"), path_in_servers("client.key"))
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request("GET", server.health_path)
            resp = conn.getresponse()
            body = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            return False
        return server.health_path != API_HEALTH or json.loads(body) == {"status": "ok"}
    except (OSError, ValueError, http.client.HTTPException):
        return False


def read_env():
    try:
        with open(ENV_FILE) as f:
            text = f.read()
    except OSError:
        return None, {}
    values = {key: shlex.split(value)[0] if value else "" for key, value in
              (line.split("=", 1) for line in text.splitlines() if "=" in line)}
    return text, values


def port_of(url):
    return int(url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])


def running_and_healthy():
    """The env text if every server runs and answers, else None."""
    text, values = read_env()
    if text is None:
        return None
    for server in SERVER_LIST:
        if read_pid(server) is None or server.env_key not in values:
            return None
        # Generous timeout: a busy server must not be mistaken for a dead one.
        if not is_healthy(server, port_of(values[server.env_key]), timeout=3.0):
            return None
    return text


def tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)\n"


# --- commands -----------------------------------------------------------

def stop(quiet=False):
    pids = {}
    for server in SERVER_LIST:
        pid = read_pid(server)
        if pid is not None:
            pids[server.name] = pid
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    wait_for_groups(pids.values(), STOP_TIMEOUT)
    for name, pid in pids.items():
        if group_alive(pid):
            say(f"{name} (pid {pid}) did not stop in time, killing it")
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    wait_for_groups(pids.values(), 2.0)
    # Our servers are reparented to PID 1 once `start` exits; give it a moment
    # to reap them so no <defunct> entries linger after `stop`.
    wait_for_groups(pids.values(), 3.0, count_zombies=True)
    for server in SERVER_LIST:
        try:
            os.remove(path_in_servers(server.name + ".pid"))
        except FileNotFoundError:
            pass
    try:
        os.remove(ENV_FILE)
    except FileNotFoundError:
        pass
    if not quiet:
        say(f"stopped {', '.join(pids) or 'nothing (no server was running)'}")
    return 0


def make_certs():
    out = subprocess.run(
        [os.path.join(VENV_BIN, "python"), os.path.join(TESTAPI, "make_certs.py"), SERVERS],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def launch_all():
    """Starts every server on new free ports and waits until each answers; returns the ports and
    the servers that exited or did not answer in time (none when all are up)."""
    ports = dict(zip((s.name for s in SERVER_LIST), free_ports(len(SERVER_LIST))))
    procs = {}
    for server in SERVER_LIST:
        say(f"starting {server.name} on 127.0.0.1:{ports[server.name]}")
        procs[server.name] = launch(server, ports[server.name])

    pending = list(SERVER_LIST)
    deadline = time.monotonic() + READY_TIMEOUT
    while pending:
        failed = [s for s in pending if procs[s.name].poll() is not None]
        if not failed and time.monotonic() > deadline:
            failed = pending
        if failed:
            return ports, failed
        pending = [s for s in pending if not is_healthy(s, ports[s.name], timeout=0.5)]
        if pending:
            time.sleep(POLL_INTERVAL)
    return ports, []


def start():
    text = running_and_healthy()
    if text is not None:
        say("already running")
        sys.stdout.write(text)
        return 0
    stop(quiet=True)  # clear out anything half-running

    say("generating certificates")
    try:
        pins = make_certs()
    except (subprocess.CalledProcessError, OSError, ValueError) as exc:
        say(f"certificate generation failed: {getattr(exc, 'stderr', '') or exc}")
        return 1

    for attempt in range(1, START_ATTEMPTS + 1):
        ports, failed = launch_all()
        if not failed:
            break
        logs = {s.name: tail(path_in_servers(s.name + ".log")) for s in failed}
        stop(quiet=True)
        lost_port = any("in use" in text for text in logs.values())
        if lost_port and attempt < START_ATTEMPTS:
            say(f"{', '.join(logs)} lost its port to another process; starting again on new ports")
            continue
        for name, text in logs.items():
            say(f"{name} failed to start; last lines of .servers/{name}.log:")
            sys.stderr.write(text)
        return 1

    pairs = [(s.env_key, s.url(ports[s.name])) for s in SERVER_LIST]
    pairs += [
        ("NETWORKING_TEST_CA_FILE", path_in_servers("ca.pem")),
        ("NETWORKING_TEST_SERVER_CERT_PEM", path_in_servers("server.pem")),
        ("NETWORKING_TEST_SERVER_CERT_DER", path_in_servers("server.der")),
        ("NETWORKING_TEST_SERVER_PIN", pins["server_pin"]),
        ("NETWORKING_TEST_OTHER_PIN", pins["other_pin"]),
        ("NETWORKING_TEST_NGINX_SOCKET", nginx_socket_path()),
    ]
    # Quoted for the shell where needed (a checkout whose path has a space), as `. .servers/env`
    # and `eval "$(script/server start)"` read it.
    text = "".join(f"{key}={shlex.quote(value)}\n" for key, value in pairs)
    with open(ENV_FILE + ".tmp", "w") as f:
        f.write(text)
    os.replace(ENV_FILE + ".tmp", ENV_FILE)
    say("all servers are up")
    sys.stdout.write(text)
    return 0


def status():
    _, values = read_env()
    all_up = True
    for server in SERVER_LIST:
        pid = read_pid(server)
        if pid is None:
            all_up = False
            print(f"{server.name:15} stopped")
        else:
            where = values.get(server.env_key, "?")
            print(f"{server.name:15} running  pid {pid:<7} {where}")
    return 0 if all_up else 1


def env():
    text, _ = read_env()
    if text is None or any(read_pid(s) is None for s in SERVER_LIST):
        say("servers are not running (run: script/server start)")
        return 1
    sys.stdout.write(text)
    return 0


COMMANDS = {
    "start": start,
    "stop": stop,
    "restart": lambda: stop() or start(),
    "status": status,
    "env": env,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: script/server {'|'.join(COMMANDS)}", file=sys.stderr)
        return 2
    os.makedirs(SERVERS, exist_ok=True)
    # One command at a time: concurrent starts would race for the pid files.
    with open(path_in_servers(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if sys.argv[1] not in ("start", "restart"):
            return COMMANDS[sys.argv[1]]()
        # The servers run in sessions of their own, so a signal to this command does not reach
        # them: a start interrupted halfway stops what it had started.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            return COMMANDS[sys.argv[1]]()
        except (KeyboardInterrupt, SystemExit) as interruption:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            if LAUNCHED:
                stop(quiet=True)
            return interruption.code if isinstance(interruption, SystemExit) else 130


if __name__ == "__main__":
    sys.exit(main())
