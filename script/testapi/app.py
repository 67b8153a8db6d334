"""Test API used by the Swift integration tests and the Demo.

A small Flask app; every route lives under /api/v1. All state is kept in
memory (guarded by one lock), so it must run in a single process
(gunicorn --workers 1 with threads). Started by script/server.

Defaults worth knowing: login/signup/refresh ttl 3600 s; /books page 1,
per_page 10 (clamped to 100); /poll ready_after 0; /slow seconds 1 (max 30);
/flaky failures 1, status 503; /errors/api-code status 400, code api_error.
Errors are always JSON {"code", "message"}; validation failures are 422
{"code":"validation_failed","message":"Validation failed","fields":{...}}.

Routes for the routes/transfers/cache/offline features (each documented in
full in the comment above its code):
  GET  /openapi.json, /swagger.json      OpenAPI 3.0 / Swagger 2.0 of a subset
  POST /uploads/multipart                 multipart/form-data, files hashed while streaming
  PUT|POST /uploads/raw                   raw body: size, SHA-256, MD5, Content-MD5,
                                          Content-Digest checks, gzip inflation
  GET  /files/<name>[/sha256]             deterministic file (default 1 MiB, max 2 GiB),
                                          Range/If-Range, cut_after, cut_once
  GET  /cache/resource/<key>              caching headers from the query, 304s;
  POST /cache/resource/<key>/touch        /cache/hits/<key> counts requests
  POST|GET|DELETE /journal/<stream>       offline-queue target (POST needs a token)
  POST /batch                             Facebook-style batch, at most 50 items
                                          (?fail=<status> fails it; ?max_bytes=<n>
                                          answers 413 to a larger body)
Every POST/PUT/PATCH/DELETE under /api/v1 honours Idempotency-Key (see
"idempotency" below). POST /test/reset also forgets the journal, the
idempotency store, cache versions and counts, and used cut_once keys.
"""

import base64
import email.utils
import functools
import gzip
import hashlib
import json
import math
import re
import secrets
import socket
import threading
import time
import zlib
from datetime import datetime, timezone

from flask import Blueprint, Flask, Response, g, request
from werkzeug.exceptions import HTTPException
from werkzeug.formparser import MultiPartParser

PREFIX = "/api/v1"
GENRES = ["novel", "poetry", "science", "history", "fantasy"]
DEFAULT_TTL = 3600.0
MAX_BYTES = 50_000_000
REDIRECT_STATUSES = (301, 302, 303, 307, 308)

app = Flask(__name__)
app.json.sort_keys = False  # keep dict order (e.g. /echo args) as built
api = Blueprint("api", __name__, url_prefix=PREFIX)


# --- in-memory state ------------------------------------------------------

class State:
    """Everything the API remembers. Access it only while holding `lock`."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = {}           # id -> user dict (includes "password")
        self.next_user_id = 1
        self.access_tokens = {}   # token -> {"user_id", "expires_at", "expired"}
        self.refresh_tokens = {}  # token -> user id
        self.books = {}           # id -> book dict
        self.next_book_id = 1
        self.reset_test_state()

    def reset_test_state(self):
        """State wiped by POST /test/reset (users, tokens and books survive)."""
        self.counters = {"refresh_calls": 0, "logins": 0}
        self.flaky = {}  # key -> list of call times
        self.polls = {}  # key -> list of recorded requests
        self.journal = {}  # stream -> {"entries": [...], "deliveries": n}
        self.idempotency = {}  # (key, user id or None) -> entry (see idempotency_begin)
        self.cache_versions = {}  # /cache/resource key -> version (default 1)
        self.cache_hits = {}  # /cache/resource key -> {"requests", "conditional", "not_modified"}
        self.cut_once_keys = set()  # /files cut_once keys already used


state = State()


def seed():
    state.users[1] = {
        "id": 1,
        "name": "Ada Reader",
        "email": "reader@example.com",
        "password": "secret123",
        "created_at": "2024-01-02T03:04:05Z",
    }
    state.next_user_id = 2
    authors = ["Ursula Quill", "Tomas Vance", "Mira Okafor", "Jonas Held", "Lena Park"]
    nouns = ["River", "Atlas", "Garden", "Lantern", "Harbor"]
    for i in range(1, 26):
        state.books[i] = {
            "id": i,
            "title": f"The {nouns[(i - 1) // 5]} of Book {i}",
            "author": authors[(i - 1) % 5],
            "genre": GENRES[(i - 1) % len(GENRES)],
            "year": 1900 + i * 4,
            "image_url": None,
        }
    state.next_book_id = 26


seed()


# --- helpers --------------------------------------------------------------

def json_response(payload, status=200, headers=None):
    return Response(
        json.dumps(payload, separators=(",", ":")),
        status=status,
        headers=headers,
        mimetype="application/json",
    )


def error(status, code, message, **extra):
    return json_response({"code": code, "message": message, **extra}, status)


def validation_error(fields):
    return error(422, "validation_failed", "Validation failed", fields=fields)


def no_body(status):
    """A response with an empty body and no Content-Type header."""
    resp = Response(b"", status=status)
    resp.headers.pop("Content-Type", None)
    return resp


def body_json():
    """The request body parsed as JSON whatever its Content-Type, or None."""
    return request.get_json(force=True, silent=True)


def body_object():
    data = body_json()
    return data if isinstance(data, dict) else {}


def is_blank(value):
    return value is None or (isinstance(value, str) and not value.strip())


def public_user(user):
    return {k: user[k] for k in ("id", "name", "email", "created_at")}


def query_float(name, default):
    try:
        value = float(request.args.get(name, default))
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


def query_int(name, default):
    try:
        return int(request.args.get(name, default))
    except (TypeError, ValueError):
        return default


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- authentication ------------------------------------------------------

def raw_token(header_value):
    """Accepts both "Bearer <token>" and a bare "<token>"."""
    value = (header_value or "").strip()
    if value[:7].lower() == "bearer ":
        value = value[7:].strip()
    return value


def issue_tokens(user, ttl):
    """Creates a new access/refresh pair; caller holds the lock."""
    access = secrets.token_urlsafe(24)
    refresh = secrets.token_urlsafe(32)
    state.access_tokens[access] = {
        "user_id": user["id"],
        "expires_at": time.time() + ttl,
        "expired": False,
    }
    state.refresh_tokens[refresh] = user["id"]
    expires_in = int(ttl) if float(ttl).is_integer() else ttl
    return {
        "user": public_user(user),
        "token": access,
        "refresh_token": refresh,
        "expires_in": expires_in,
    }


def parse_ttl(data):
    """Returns (ttl, error_response)."""
    ttl = data.get("ttl", DEFAULT_TTL)
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        return None, validation_error({"ttl": ["must be a number"]})
    return ttl, None


def authenticate():
    """Returns (user, None) or (None, 401 response)."""
    token = raw_token(request.headers.get("Authorization"))
    with state.lock:
        entry = state.access_tokens.get(token) if token else None
        if entry is None:
            return None, error(401, "unauthenticated", "Missing or invalid token")
        if entry["expired"] or time.time() >= entry["expires_at"]:
            return None, error(401, "token_expired", "The token is expired")
        return state.users[entry["user_id"]], None


def requires_auth(view):
    """Decorator: passes the authenticated user as the first argument."""
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        user, failure = authenticate()
        if failure is not None:
            return failure
        return view(user, *args, **kwargs)

    return wrapper


@api.post("/auth/login")
def login():
    data = body_object()
    with state.lock:
        state.counters["logins"] += 1
    fields = {f: ["can't be blank"] for f in ("email", "password") if is_blank(data.get(f))}
    if fields:
        return validation_error(fields)
    ttl, failure = parse_ttl(data)
    if failure:
        return failure
    with state.lock:
        email_address = str(data["email"]).strip().lower()
        user = next((u for u in state.users.values() if u["email"] == email_address), None)
        if user is None or user["password"] != data["password"]:
            return error(401, "invalid_credentials", "Wrong email or password")
        return json_response(issue_tokens(user, ttl))


@api.post("/auth/signup")
def signup():
    data = body_object()
    fields = {f: ["can't be blank"] for f in ("name", "email", "password") if is_blank(data.get(f))}
    ttl, failure = parse_ttl(data)
    if failure:
        return failure
    with state.lock:
        if "email" not in fields:
            email_address = str(data["email"]).strip().lower()
            if any(u["email"] == email_address for u in state.users.values()):
                fields["email"] = ["has already been taken"]
        if fields:
            return validation_error(fields)
        user = {
            "id": state.next_user_id,
            "name": str(data["name"]).strip(),
            "email": email_address,
            "password": str(data["password"]),
            "created_at": now_iso(),
        }
        state.users[user["id"]] = user
        state.next_user_id += 1
        return json_response(issue_tokens(user, ttl), 201)


@api.post("/auth/refresh")
def refresh():
    with state.lock:
        state.counters["refresh_calls"] += 1
    delay = min(max(query_float("delay", 0.0), 0.0), 30.0)
    if delay:
        time.sleep(delay)
    data = body_object()
    ttl, failure = parse_ttl(data)
    if failure:
        return failure
    token = data.get("refresh_token")
    with state.lock:
        user_id = state.refresh_tokens.pop(token, None) if isinstance(token, str) else None
        if user_id is None:
            return error(401, "invalid_refresh_token", "The refresh token is invalid")
        return json_response(issue_tokens(state.users[user_id], ttl))


@api.get("/users/me")
@requires_auth
def me(user):
    return json_response(public_user(user))


@api.post("/users/<int:user_id>/notifications/read_all")
@requires_auth
def read_all_notifications(user, user_id):
    if user_id != user["id"]:
        return error(403, "forbidden", "You cannot change another user's notifications")
    return no_body(204)


# --- books --------------------------------------------------------------

def validate_book(data, partial):
    """Returns a dict of field -> [messages] for the failing fields only.

    With partial=True only the fields present in `data` are checked."""
    fields = {}

    def check(name, test):
        if partial and name not in data:
            return
        message = test(data.get(name))
        if message:
            fields[name] = [message]

    def text(value):
        if is_blank(value):
            return "can't be blank"
        if not isinstance(value, str):
            return "must be a string"
        return None

    def genre(value):
        if is_blank(value):
            return "can't be blank"
        if value not in GENRES:
            return "is not one of " + ", ".join(GENRES)
        return None

    def year(value):
        if value is None:
            return "can't be blank"
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2100:
            return "must be an integer between 0 and 2100"
        return None

    def image_url(value):
        if value is not None and not isinstance(value, str):
            return "must be a string or null"
        return None

    check("title", text)
    check("author", text)
    check("genre", genre)
    check("year", year)
    if "image_url" in data:
        check("image_url", image_url)
    return fields


def book_fields(data):
    """The writable book fields of a validated payload (strings trimmed)."""
    out = {}
    for key in ("title", "author", "genre", "year", "image_url"):
        if key in data:
            value = data[key]
            out[key] = value.strip() if key in ("title", "author") else value
    return out


def book_not_found(book_id):
    return error(404, "not_found", f"Book {book_id} not found")


@api.get("/books")
@requires_auth
def list_books(user):
    page, per_page = request.args.get("page", "1"), request.args.get("per_page", "10")
    fields = {}
    try:
        page = int(page)
        if page < 1:
            raise ValueError
    except ValueError:
        fields["page"] = ["must be an integer greater than or equal to 1"]
    try:
        per_page = int(per_page)
        if per_page < 1:
            raise ValueError
    except ValueError:
        fields["per_page"] = ["must be an integer greater than or equal to 1"]
    if fields:
        return validation_error(fields)
    per_page = min(per_page, 100)
    with state.lock:
        books = [state.books[k] for k in sorted(state.books)]
    start = (page - 1) * per_page
    return json_response(
        {
            "data": books[start:start + per_page],
            "page": {
                "current": page,
                "per_page": per_page,
                "total_pages": math.ceil(len(books) / per_page),
                "total_count": len(books),
            },
        }
    )


@api.post("/books")
@requires_auth
def create_book(user):
    data = body_object()
    fields = validate_book(data, partial=False)
    if fields:
        return validation_error(fields)
    with state.lock:
        book = {"id": state.next_book_id, "image_url": None, **book_fields(data)}
        book = {k: book[k] for k in ("id", "title", "author", "genre", "year", "image_url")}
        state.books[book["id"]] = book
        state.next_book_id += 1
        return json_response(book, 201)


@api.get("/books/<int:book_id>")
@requires_auth
def get_book(user, book_id):
    with state.lock:
        book = state.books.get(book_id)
    return json_response(book) if book else book_not_found(book_id)


@api.route("/books/<int:book_id>", methods=["PUT", "PATCH"])
@requires_auth
def update_book(user, book_id):
    data = body_object()
    partial = request.method == "PATCH"
    with state.lock:
        book = state.books.get(book_id)
        if book is None:
            return book_not_found(book_id)
        fields = validate_book(data, partial=partial)
        if fields:
            return validation_error(fields)
        changes = book_fields(data)
        if not partial:
            changes.setdefault("image_url", None)
        book.update(changes)
        return json_response(book)


@api.delete("/books/<int:book_id>")
@requires_auth
def delete_book(user, book_id):
    with state.lock:
        if state.books.pop(book_id, None) is None:
            return book_not_found(book_id)
    return no_body(204)


# --- polling --------------------------------------------------------------

def request_record():
    return {
        "method": request.method,
        "args": request.args.to_dict(flat=False),
        "headers": dict(request.headers),
        "json": body_json(),
    }


@api.route("/poll/<key>", methods=["GET", "POST"])
def poll(key):
    ready_after = query_int("ready_after", 0)
    record = request_record()
    with state.lock:
        calls = state.polls.setdefault(key, [])
        calls.append(record)
        attempts = len(calls)
    if attempts <= ready_after:
        return json_response({"key": key, "status": "pending", "attempts": attempts}, 202)
    return json_response({"key": key, "status": "done", "attempts": attempts})


@api.get("/test/poll/<key>")
def poll_history(key):
    with state.lock:
        calls = list(state.polls.get(key, []))
    return json_response({"attempts": len(calls), "requests": calls})


# --- malformed and unusual responses --------------------------------------------

@api.get("/broken/malformed")
def broken_malformed():
    return Response('{"id": 1, "title": "Broken', mimetype="application/json")


@api.get("/broken/wrong-shape")
def broken_wrong_shape():
    return json_response(
        {"id": "one", "title": 42, "author": None, "genre": "novel", "year": "1999"}
    )


def cyberpunk_book():
    return {"id": 99, "title": "Neon Rain", "author": "Kai Sato", "genre": "cyberpunk",
            "year": 2077, "image_url": None}


@api.get("/broken/unknown-enum")
def broken_unknown_enum():
    return json_response(cyberpunk_book())


@api.get("/broken/unknown-enum-list")
def broken_unknown_enum_list():
    with state.lock:
        valid = [dict(state.books[k]) for k in sorted(state.books)[:3]]
    books = valid + [cyberpunk_book()]
    page = {"current": 1, "per_page": len(books), "total_pages": 1, "total_count": len(books)}
    return json_response({"data": books, "page": page})


@api.get("/slow")
def slow():
    seconds = min(max(query_float("seconds", 1.0), 0.0), 30.0)
    time.sleep(seconds)
    return json_response({"slept": seconds})


@api.get("/empty")
def empty():
    return no_body(200)


@api.get("/no-content")
def no_content():
    return no_body(204)


ECHO_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@api.route("/echo", methods=ECHO_METHODS, provide_automatic_options=False)
@api.route("/echo/<path:rest>", methods=ECHO_METHODS, provide_automatic_options=False)
def echo(rest=None):
    # gunicorn puts the request target exactly as sent in RAW_URI.
    raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or request.full_path
    raw_path = raw.split("?", 1)[0]
    data = request.get_data(cache=True)
    try:
        parsed = json.loads(data) if data else None
    except ValueError:
        parsed = None
    return json_response(
        {
            "method": request.method,
            "path": raw_path,
            "query": request.query_string.decode("latin-1"),
            "args": request.args.to_dict(flat=False),
            "headers": dict(request.headers),
            "json": parsed,
            "data": data.decode("utf-8", errors="replace"),
            # The port of the connection as this server sees it (a proxy's, through one).
            "peer_port": int(request.environ.get("REMOTE_PORT") or 0),
        }
    )


STATUS_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@api.route("/status/<int:code>", methods=STATUS_METHODS)
def status(code):
    if not 200 <= code <= 599:
        code = 400
    if code in (204, 304):
        return no_body(code)
    return error(code, f"status_{code}", f"Status {code}")


@api.get("/errors/api-code")
def api_code():
    status_code = query_int("status", 400)
    if not 400 <= status_code <= 599:
        status_code = 400
    code = request.args.get("code", "api_error")
    return error(status_code, code, f"API error {code}")


@api.get("/basic-auth-401")
def basic_auth_401():
    return json_response({"code": "basic_required"}, 401,
                         headers={"WWW-Authenticate": 'Basic realm="test"'})


@api.before_request
def move_to_origin():
    """`X-Move-To: <scheme://host:port>` answers a request that did not come to that address with
    a redirect (`X-Move-Status`, default 301) to the same path and query there: an API moved to
    another address (http to https, another host name). The request that arrives there, header
    and all, runs as usual."""
    target = request.headers.get("X-Move-To")
    if not target or request.host_url.rstrip("/").lower() == target.rstrip("/").lower():
        return None
    raw_status = request.headers.get("X-Move-Status", "301")
    status = int(raw_status) if raw_status.isdigit() else 0
    if status not in REDIRECT_STATUSES:
        return validation_error({"X-Move-Status": ["is not one of 301, 302, 303, 307, 308"]})
    raw = request.environ.get("RAW_URI") or request.full_path
    location = target.rstrip("/") + raw
    return json_response({"location": location}, status, headers={"Location": location})


@api.route("/redirect/<int:code>", methods=["GET", "POST"])
def redirect_to(code):
    if code not in REDIRECT_STATUSES:
        return validation_error({"status": ["is not one of 301, 302, 303, 307, 308"]})
    target = request.args.get("to", PREFIX + "/echo")
    return json_response({"location": target}, code, headers={"Location": target})


def compressible_payload(kind):
    items = [
        {"id": i, "name": f"Item {i}",
         "description": f"Compressed item number {i} repeating text to reach a useful size."}
        for i in range(1, 21)
    ]
    return json.dumps({"compressed": kind, "items": items}, separators=(",", ":")).encode()


@api.get("/gzip")
def gzipped():
    body = gzip.compress(compressible_payload("gzip"))
    return Response(body, mimetype="application/json",
                    headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})


@api.get("/deflate")
def deflated():
    # HTTP "deflate" is the zlib format (RFC 1950), which zlib.compress writes.
    body = zlib.compress(compressible_payload("deflate"))
    return Response(body, mimetype="application/json",
                    headers={"Content-Encoding": "deflate", "Vary": "Accept-Encoding"})


# 261 full cycles of 0..250: every chunk starts at a multiple of 251, so the
# pattern byte[i] = i % 251 continues seamlessly across chunks.
PATTERN = bytes(range(251)) * 261


@api.get("/bytes/<int:count>")
def byte_stream(count):
    if count > MAX_BYTES:
        return validation_error({"n": [f"must be less than or equal to {MAX_BYTES}"]})

    def chunks():
        remaining = count
        while remaining > 0:
            chunk = PATTERN[:remaining]
            remaining -= len(chunk)
            yield chunk

    return Response(chunks(), mimetype="application/octet-stream",
                    headers={"Content-Length": str(count)})


@api.get("/drop")
def drop():
    sock = request.environ.get("gunicorn.socket")

    def body():
        yield bytes(1000)
        # Cut the connection mid-body: the client is promised 100000 bytes.
        cut_connection(sock)

    return Response(body(), mimetype="application/octet-stream",
                    headers={"Content-Length": "100000"})


# --- server-sent events ----------------------------------------------------
#
# GET or POST /events/<key>: a text/event-stream of events numbered 1..count
# (a POST's body read whole first)
# (query count, default 3), each "id: n", "event: book", "data: {json}", after
# the request's Last-Event-ID (so a reconnection resumes). The stream starts
# with a byte order mark, a comment and, with retry=ms, a retry field; event 2
# has two data lines; lines end in LF, CRLF (crlf=1) or CR (cr=1); per=n
# sends at most n events on one connection. Then:
# cut=1 breaks the connection instead of ending the body; stop=1 answers 204
# once Last-Event-ID has reached count; chunked=1 sends each line on its own.
# Every request's Last-Event-ID (or null) is kept: GET /events/<key>/log.
# GET /events/<key>/private: the same for a signed-in user only.

EVENT_LOG = {}


def event_stream(key):
    last = request.headers.get("Last-Event-ID")
    with state.lock:
        EVENT_LOG.setdefault(key, []).append(last)
    count = query_int("count", 3)
    start = int(last) + 1 if last and last.isdigit() else 1
    per = query_int("per", 0)
    stop = min(count, start + per - 1) if per > 0 else count
    if request.args.get("stop") == "1" and start > count:
        return Response(status=204)
    end = "\r\n" if request.args.get("crlf") == "1" else "\r" if request.args.get("cr") == "1" else "\n"
    retry = request.args.get("retry")
    cut = request.args.get("cut") == "1"
    chunked = request.args.get("chunked") == "1"
    sock = request.environ.get("gunicorn.socket")

    def lines():
        yield "\ufeff: a comment, as a heartbeat" + end
        if retry is not None:
            yield f"retry: {retry}" + end
        yield end
        for number in range(start, stop + 1):
            book = {"id": number, "title": f"Book {number}"}
            yield f"id: {number}" + end + "event: book" + end
            yield "data: " + json.dumps(book) + end
            if number == 2:
                yield "data:second line" + end
            yield end

    def body():
        if chunked:
            for line in lines():
                yield line.encode()
        else:
            yield "".join(lines()).encode()
        if cut:
            cut_connection(sock)

    return Response(body(), mimetype="text/event-stream", headers={"Cache-Control": "no-store"})


@api.route("/events/<key>", methods=["GET", "POST"])
def events(key):
    # A POST's body (a prompt) is read whole before the stream begins.
    request.get_data()
    return event_stream(key)


@api.get("/events/<key>/private")
@requires_auth
def private_events(user, key):
    return event_stream(key)


@api.get("/events/<key>/log")
def event_log(key):
    with state.lock:
        log = list(EVENT_LOG.get(key, []))
    return Response(json.dumps(log), mimetype="application/json")


# --- retry fixtures -------------------------------------------------------

@api.route("/flaky/<key>", methods=["GET", "POST"])
def flaky(key):
    failures = query_int("failures", 1)
    status_code = query_int("status", 503)
    with state.lock:
        times = state.flaky.setdefault(key, [])
        times.append(time.time())
        attempt = len(times)
    if attempt > failures:
        return json_response({"key": key, "attempts": attempt})
    headers = {}
    if "retry_after" in request.args:
        headers["Retry-After"] = request.args["retry_after"]
    if "retry_after_date" in request.args:
        when = time.time() + query_float("retry_after_date", 0.0)
        headers["Retry-After"] = email.utils.formatdate(when, usegmt=True)
    if not 400 <= status_code <= 599:
        status_code = 503
    return json_response({"code": "flaky", "attempt": attempt}, status_code, headers=headers)


@api.get("/test/flaky/<key>")
def flaky_history(key):
    with state.lock:
        times = list(state.flaky.get(key, []))
    return json_response({"attempts": len(times), "times": times})


# --- idempotency: Idempotency-Key on every write route ------------------------------
#
# For POST, PUT, PATCH and DELETE requests to any route of this API (also the
# items of POST /batch) that carry an `Idempotency-Key` header
# (IETF httpapi draft "The Idempotency-Key HTTP Header Field"):
# - the key is the header value with surrounding whitespace removed and, when
#   it is a structured-field string ("abc"), without its quotes: "abc" and abc
#   are the same key. Empty or longer than 255 characters: 400
#   {"code":"invalid_idempotency_key"}.
# - keys are scoped per user: (key, id of the user whose valid bearer token the
#   request carries), or (key, anonymous) without a valid token. The same key
#   from two users is two keys.
# - the first request with a key runs normally and its outcome (status,
#   headers, body) is remembered. A later request with the same key and the
#   same method and path (query string not compared, body not compared) is
#   answered with that outcome, without running the route, plus the header
#   `Idempotency-Replayed: true`.
# - same key with another method or path: 422 {"code":"idempotency_key_reused"}.
# - same key while the first request is still running: 409
#   {"code":"idempotency_key_in_use"}.
# - outcomes with a 5xx or 429 status are NOT remembered (the key is released,
#   so a retry runs the route again), nor redirects (301, 302, 307, 308: the
#   write was not run here, and goes on with its key to the new address);
#   every other status, 4xx and 303 included, is.
# - remembered outcomes live until POST /test/reset (no expiry).

IDEMPOTENT_WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
IDEMPOTENCY_KEY_MAX = 255


def token_user_id():
    """The id of the user whose valid bearer token the request carries, else None.

    Never fails: a missing, unknown or expired token just gives None."""
    token = raw_token(request.headers.get("Authorization"))
    if not token:
        return None
    with state.lock:
        entry = state.access_tokens.get(token)
        if entry is None or entry["expired"] or time.time() >= entry["expires_at"]:
            return None
        return entry["user_id"]


def journal_stream(stream):
    """The journal of `stream`, created empty on first use; caller holds the lock."""
    return state.journal.setdefault(stream, {"entries": [], "deliveries": 0})


@api.before_request
def refuse_truncated_body():
    """A write whose body ended before its Content-Length (the client died mid-send) is not run:
    werkzeug would hand the route the bytes that came, as if they were the whole body. It gets a
    503 (never remembered for its Idempotency-Key), which nobody reads. Upload routes stream their
    bodies and are left alone."""
    if request.method not in ("POST", "PUT", "PATCH", "DELETE") or (request.endpoint or "").startswith("api.upload"):
        return None
    expected = request.content_length
    if expected is None or expected > MAX_BYTES:
        return None
    if len(request.get_data(cache=True)) < expected:
        return error(503, "incomplete_body", "The request body ended before its Content-Length")
    return None


@api.before_request
def count_journal_delivery():
    # Registered before idempotency_begin so replays and rejected POSTs count too.
    if request.method == "POST" and request.endpoint == "api.journal_append":
        with state.lock:
            journal_stream(request.view_args["stream"])["deliveries"] += 1


@api.before_request
def idempotency_begin():
    if request.method not in IDEMPOTENT_WRITE_METHODS:
        return None
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    key = raw.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if not key or len(key) > IDEMPOTENCY_KEY_MAX:
        return error(400, "invalid_idempotency_key",
                     f"Idempotency-Key must have 1 to {IDEMPOTENCY_KEY_MAX} characters")
    scope = (key, token_user_id())
    fingerprint = (request.method, request.path)
    with state.lock:
        entry = state.idempotency.get(scope)
        if entry is None:
            state.idempotency[scope] = {"fingerprint": fingerprint, "outcome": None}
            g.idempotency_scope = scope
            return None
        first, outcome = entry["fingerprint"], entry["outcome"]
    if first != fingerprint:
        return error(422, "idempotency_key_reused",
                     f"Idempotency-Key {key!r} was first used for {first[0]} {first[1]}")
    if outcome is None:
        return error(409, "idempotency_key_in_use",
                     f"A request with Idempotency-Key {key!r} is still being processed")
    status_code, headers, body = outcome
    resp = Response(body, status=status_code, headers=headers)
    if not any(name.lower() == "content-type" for name, _ in headers):
        resp.headers.pop("Content-Type", None)
    resp.headers["Idempotency-Replayed"] = "true"
    return resp


@api.after_request
def idempotency_finish(resp):
    scope = g.pop("idempotency_scope", None)
    if scope is None:
        return resp
    keep = (resp.status_code < 500 and resp.status_code not in (301, 302, 307, 308, 429)
            and not resp.is_streamed)
    outcome = None
    if keep:
        headers = [(k, v) for k, v in resp.headers.items() if k.lower() != "content-length"]
        outcome = (resp.status_code, headers, resp.get_data())
    with state.lock:
        entry = state.idempotency.get(scope)
        if entry is not None and entry["outcome"] is None:
            if keep:
                entry["outcome"] = outcome
            else:
                del state.idempotency[scope]
    return resp


@api.teardown_request
def idempotency_abandon(exc):
    # The request ended without a response passing idempotency_finish: free the key.
    scope = g.pop("idempotency_scope", None)
    if scope is not None:
        with state.lock:
            entry = state.idempotency.get(scope)
            if entry is not None and entry["outcome"] is None:
                del state.idempotency[scope]


# --- journal (offline queue target) ---------------------------------------------------
#
# POST /journal/<stream>    (bearer token required, else 401)
#   Appends {"user_id", "body": <request body parsed as JSON, null when empty>,
#   "idempotency_key": <Idempotency-Key header as sent, or null>} and answers
#   201 {"index": n} (0-based position in the stream). A non-empty body that is
#   not JSON: 422 validation_failed {"body": ["must be JSON"]}, not stored.
#   ?fail=<400..599> answers that status {"code":"rejected"} without storing
#   (e.g. ?fail=422 for a rejected item; a 5xx is not remembered by the
#   idempotency store, a 4xx is).
#   Every POST received counts as a delivery, replays, 401s and rejections included.
# GET /journal/<stream>     (open) 200 {"entries": [...], "deliveries": n}
# DELETE /journal/<stream>  (open) 204, empties the stream and its delivery count.

@api.post("/journal/<stream>")
@requires_auth
def journal_append(user, stream):
    fail = query_int("fail", 0)
    if 400 <= fail <= 599:
        return error(fail, "rejected", f"Rejected on purpose (fail={fail})")
    raw = request.get_data()
    body = None
    if raw.strip():
        try:
            body = json.loads(raw)
        except ValueError:
            return validation_error({"body": ["must be JSON"]})
    entry = {
        "user_id": user["id"],
        "body": body,
        "idempotency_key": request.headers.get("Idempotency-Key"),
    }
    with state.lock:
        entries = journal_stream(stream)["entries"]
        entries.append(entry)
        index = len(entries) - 1
    return json_response({"index": index}, 201)


@api.get("/journal/<stream>")
def journal_read(stream):
    with state.lock:
        journal = state.journal.get(stream, {"entries": [], "deliveries": 0})
        payload = {"entries": list(journal["entries"]), "deliveries": journal["deliveries"]}
    return json_response(payload)


@api.delete("/journal/<stream>")
def journal_clear(stream):
    with state.lock:
        state.journal.pop(stream, None)
    return no_body(204)


# --- batch (Facebook Graph API batch format) --------------------------------------------
#
# POST /batch with a JSON body {"batch": [item, ...]} (or a form field `batch`
# holding that array as JSON text). Each item:
#   {"method": "GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS",
#    "relative_url": "journal/x?fail=422",      relative to /api/v1/ (a leading "/" is accepted)
#    "headers": [{"name": "...", "value": "..."}, ...],   optional
#    "body": "<request body as a string>"}     optional; a JSON object/array is serialized
# Items run in order, one after the other, through this same app (same state,
# same hooks: Idempotency-Key works per item). An item without an
# Authorization header inherits the batch request's one. An item with a body
# and no Content-Type header is sent as application/json.
# Answer: 200 with a JSON array, in item order, of
#   {"code": <status>, "headers": [{"name", "value"}...], "body": "<response body as a string>"}
#   ("" for an empty body). An item that is not an object, lacks method or
#   relative_url, or has a bad field: {"code": 400, ..., "body": "{\"code\":\"invalid_batch_item\",...}"};
#   an item whose route crashes or cuts the connection: {"code": 500, ...}.
# Errors for the whole batch: more than 50 items 400 batch_too_large; `batch`
# missing or not an array 422 validation_failed; ?fail=<400..599> answers that
# status {"code":"batch_failed"} without running any item (e.g. ?fail=503);
# a batch inside a batch item: that item answers 400 nested_batch.

BATCH_MAX_ITEMS = 50
BATCH_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def batch_item_result(status_code, headers, body):
    return {
        "code": status_code,
        "headers": [{"name": k, "value": v} for k, v in headers],
        "body": body.decode("utf-8", errors="replace"),
    }


def batch_item_error(status_code, code, message):
    body = json.dumps({"code": code, "message": message}, separators=(",", ":")).encode()
    return batch_item_result(status_code, [("Content-Type", "application/json"),
                                           ("Content-Length", str(len(body)))], body)


def run_batch_item(client, item, authorization, remote_addr):
    if not isinstance(item, dict):
        return batch_item_error(400, "invalid_batch_item", "A batch item must be an object")
    method, url = item.get("method"), item.get("relative_url")
    if not isinstance(method, str) or method.upper() not in BATCH_METHODS:
        return batch_item_error(400, "invalid_batch_item",
                                "method must be one of " + ", ".join(BATCH_METHODS))
    if not isinstance(url, str) or not url.strip() or "://" in url:
        return batch_item_error(400, "invalid_batch_item",
                                "relative_url must be a URL relative to /api/v1/")
    raw_headers = item.get("headers", [])
    if raw_headers is None:
        raw_headers = []
    if not isinstance(raw_headers, list) or not all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
        for h in raw_headers
    ):
        return batch_item_error(400, "invalid_batch_item",
                                'headers must be an array of {"name", "value"} strings')
    body = item.get("body")
    if isinstance(body, (dict, list)):
        body = json.dumps(body, separators=(",", ":"))
    if body is not None and not isinstance(body, str):
        return batch_item_error(400, "invalid_batch_item", "body must be a string")
    headers = [(h["name"], h["value"]) for h in raw_headers]
    names = {name.lower() for name, _ in headers}
    if authorization is not None and "authorization" not in names:
        headers.append(("Authorization", authorization))
    if body is not None and "content-type" not in names:
        headers.append(("Content-Type", "application/json"))
    try:
        resp = client.open(
            PREFIX + "/" + url.lstrip("/"),
            method=method.upper(),
            headers=headers,
            data=body.encode() if body is not None else None,
            environ_overrides={"testapi.batch_item": True, "REMOTE_ADDR": remote_addr},
        )
        data = resp.get_data()
        result_headers = list(resp.headers.items())
        resp.close()
    except Exception as exc:  # e.g. a route that cuts the connection
        return batch_item_error(500, "batch_item_failed", f"The item failed: {exc}")
    return batch_item_result(resp.status_code, result_headers, data)


@api.post("/batch")
def batch():
    if request.environ.get("testapi.batch_item"):
        return error(400, "nested_batch", "A batch item cannot be a batch")
    fail = query_int("fail", 0)
    if 400 <= fail <= 599:
        return error(fail, "batch_failed", f"Batch failed on purpose (fail={fail})")
    max_bytes = query_int("max_bytes", 0)
    if max_bytes > 0 and (request.content_length or 0) > max_bytes:
        return error(413, "batch_too_large", f"A batch has at most {max_bytes} bytes")
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        try:
            items = json.loads(request.form.get("batch", ""))
        except ValueError:
            items = None
    else:
        items = body_object().get("batch")
    if not isinstance(items, list):
        return validation_error({"batch": ["must be an array"]})
    if len(items) > BATCH_MAX_ITEMS:
        return error(400, "batch_too_large",
                     f"A batch has at most {BATCH_MAX_ITEMS} items, got {len(items)}")
    authorization = request.headers.get("Authorization")
    client = app.test_client()
    # The items run without holding the state lock: each takes it as needed.
    results = [run_batch_item(client, item, authorization, request.remote_addr) for item in items]
    return json_response(results)


# --- uploads ---------------------------------------------------------------------------

UPLOAD_READ_CHUNK = 1024 * 1024
JSON_ECHO_LIMIT = 1024 * 1024  # bodies of at least 1 MiB are not parsed as JSON
INFLATE_STEP = 1024 * 1024  # at most this much inflated output per zlib call


class DigestSink:
    """Stands in for the temporary file werkzeug writes an uploaded file to:
    it only counts and hashes the bytes, so a file of any size costs neither
    memory nor disk."""

    def __init__(self):
        self.size = 0
        self.sha256 = hashlib.sha256()

    def write(self, data):
        self.size += len(data)
        self.sha256.update(data)
        return len(data)

    def seek(self, *args):
        return 0

    def read(self, *args):
        return b""

    def close(self):
        pass


def digest_sink_factory(total_content_length=None, content_type=None, filename=None,
                        content_length=None):
    return DigestSink()


# POST /uploads/multipart  (multipart/form-data; parsed by werkzeug's MultiPartParser)
#   200 {"content_type": <request Content-Type>,
#        "fields": {name: [value, ...]},          parts without a filename, UTF-8 decoded
#        "files": [{"name", "filename", "content_type" (of the part, or null),
#                   "content_disposition" (the part's header as decoded), "size", "sha256"}]}
#   Files are listed in the order they were sent and are hashed while they
#   stream in (never kept in memory or on disk): no size limit. Text fields:
#   at most MAX_FORM_MEMORY_SIZE bytes each (Flask default 500 000) and at most
#   MAX_FORM_PARTS parts (Flask default 1000), else 413. A part is a file when
#   its Content-Disposition has a filename parameter (filename*=UTF-8''... is
#   decoded). Not multipart/form-data: 415 unsupported_media_type; no
#   boundary or broken framing: 400 bad_multipart.
@api.post("/uploads/multipart")
def upload_multipart():
    if request.mimetype != "multipart/form-data":
        return error(415, "unsupported_media_type", "Send multipart/form-data")
    boundary = request.mimetype_params.get("boundary")
    if not boundary:
        return error(400, "bad_multipart", "The Content-Type has no boundary parameter")
    request.max_content_length = None  # whatever app-wide limit: none for this route
    parser = MultiPartParser(
        stream_factory=digest_sink_factory,
        max_form_memory_size=request.max_form_memory_size,
        max_form_parts=request.max_form_parts,
        cls=list,  # (name, value) pairs in the order received
    )
    try:
        fields, files = parser.parse(request.stream, boundary.encode("latin-1"),
                                     request.content_length)
    except UnicodeDecodeError:
        return error(400, "bad_multipart", "A part's headers are not UTF-8")
    except ValueError as exc:
        return error(400, "bad_multipart", f"Malformed multipart body: {exc}")
    field_map = {}
    for name, value in fields:
        field_map.setdefault(name, []).append(value)
    return json_response({
        "content_type": request.headers.get("Content-Type"),
        "fields": field_map,
        "files": [
            {
                "name": name,
                "filename": storage.filename,
                "content_type": storage.headers.get("Content-Type"),
                "content_disposition": storage.headers.get("Content-Disposition"),
                "size": storage.stream.size,
                "sha256": storage.stream.sha256.hexdigest(),
            }
            for name, storage in files
        ],
    })


class DigestHeaderError(ValueError):
    pass


def parse_content_digest(value):
    """{algorithm: bytes} from a Content-Digest value (RFC 9530: a structured-field
    dictionary of byte sequences, sha-256=:<base64>:). Raises DigestHeaderError."""
    digests = {}
    for member in value.split(","):
        member = member.strip()
        name, eq, item = member.partition("=")
        name = name.strip().lower()
        if not eq or not re.fullmatch(r"[a-z*][a-z0-9_.*-]*", name):
            raise DigestHeaderError(
                f"{member!r} is not a dictionary member algorithm=:base64: (RFC 9530)")
        item = item.split(";", 1)[0].strip()  # parameters are ignored
        if not (len(item) >= 2 and item[0] == ":" and item[-1] == ":"):
            kind = "hex" if re.fullmatch(r"[0-9a-fA-F]+", item) else "not a byte sequence"
            raise DigestHeaderError(
                f"{name} value {item!r} is {kind}: it must be a structured-field byte "
                f"sequence, base64 between colons, e.g. {name}=:<base64>: (RFC 9530)")
        try:
            digests[name] = base64.b64decode(item[1:-1], validate=True)
        except ValueError:
            raise DigestHeaderError(f"{name} value {item!r} is not valid base64") from None
    return digests


# PUT|POST /uploads/raw  (any body; Content-Length or Transfer-Encoding: chunked)
#   The body is read in 1 MiB chunks, never whole. Answer 200:
#   {"size", "sha256" (hex), "md5_base64", "content_type" (header or null),
#    "content_length" (header as an integer, or null), "transfer_encoding" (header or null),
#    "content_encoding" (header or null), "inflated_size", "inflated_sha256"
#    (null unless Content-Encoding: gzip), "json", "content_md5_checked" and
#    "content_digest_checked" (whether that header came, and so matched)}
#   size/sha256/md5 cover the bytes as received (before any inflation).
#   "json": the body (the inflated one for gzip) parsed as JSON when it is
#   smaller than 1 MiB and valid JSON, else null.
#   Checks, all made after the whole body was read:
#   - Content-MD5 present: must equal base64(MD5 of the bytes) (RFC 1864); a hex
#     value or any other mismatch: 400 digest_mismatch.
#   - Content-Digest present: must contain sha-256=:<base64>: (RFC 9530) equal to the
#     SHA-256 of the bytes (sha-512 is checked too when present, others are
#     ignored); missing sha-256, unparsable, hex instead of :base64:, wrong length
#     or mismatch: 400 digest_mismatch. The message says which.
#   - Content-Encoding: gzip (or x-gzip): inflated as a stream (zlib wbits 31,
#     concatenated members accepted); does not inflate: 400 bad_gzip. Other
#     codings (except identity): 415 unsupported_content_encoding with
#     Accept-Encoding: gzip.
#   digest_mismatch errors carry "header", "expected" (what the server computed,
#   in the header's format) and "received".
@api.route("/uploads/raw", methods=["PUT", "POST"])
def upload_raw():
    content_encoding = request.headers.get("Content-Encoding")
    coding = (content_encoding or "").strip().lower()
    gzipped = coding in ("gzip", "x-gzip")
    if coding not in ("", "identity") and not gzipped:
        resp = error(415, "unsupported_content_encoding",
                     f"Content-Encoding {content_encoding!r} is not supported; send gzip")
        resp.headers["Accept-Encoding"] = "gzip"
        return resp
    request.max_content_length = None
    size, md5, sha256, sha512 = 0, hashlib.md5(), hashlib.sha256(), hashlib.sha512()
    json_buffer = bytearray()
    json_overflow = False
    inflated_size, inflated_sha256 = 0, hashlib.sha256()
    inflater = zlib.decompressobj(31) if gzipped else None
    gzip_error = None

    def keep_for_json(data):
        nonlocal json_overflow
        if not json_overflow:
            if len(json_buffer) + len(data) >= JSON_ECHO_LIMIT:
                json_overflow = True
                json_buffer.clear()
            else:
                json_buffer.extend(data)

    def inflated(data):
        nonlocal inflated_size
        inflated_size += len(data)
        inflated_sha256.update(data)
        keep_for_json(data)

    def inflate(data):
        nonlocal inflater
        while data:
            if inflater.eof:  # another gzip member follows
                inflater = zlib.decompressobj(31)
            inflated(inflater.decompress(data, INFLATE_STEP))
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail

    stream = request.stream
    while True:
        chunk = stream.read(UPLOAD_READ_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        md5.update(chunk)
        sha256.update(chunk)
        sha512.update(chunk)
        if inflater is not None and gzip_error is None:
            try:
                inflate(chunk)
            except zlib.error as exc:
                gzip_error = str(exc)
        elif inflater is None:
            keep_for_json(chunk)
    if inflater is not None and gzip_error is None:
        try:
            inflated(inflater.flush())  # output zlib still holds (bounded, small)
        except zlib.error as exc:
            gzip_error = str(exc)
        if gzip_error is None and not inflater.eof:
            gzip_error = "the gzip stream ends before its end (truncated or empty body)"

    md5_base64 = base64.b64encode(md5.digest()).decode()
    sha256_bytes = sha256.digest()

    def mismatch(header, message, expected, received):
        return error(400, "digest_mismatch", message, header=header, expected=expected,
                     received=received)

    content_md5 = request.headers.get("Content-MD5")
    if content_md5 is not None:
        received = content_md5.strip()
        if received != md5_base64:
            why = ("it looks like hex; Content-MD5 is the base64 of the 16-byte digest (RFC 1864)"
                   if re.fullmatch(r"[0-9a-fA-F]{32}", received)
                   else "it does not match the MD5 of the body as received")
            return mismatch("Content-MD5", f"Content-MD5 {received!r} is wrong: {why}",
                            md5_base64, content_md5)
    content_digest = request.headers.get("Content-Digest")
    if content_digest is not None:
        expected = f"sha-256=:{base64.b64encode(sha256_bytes).decode()}:"
        try:
            digests = parse_content_digest(content_digest)
        except DigestHeaderError as exc:
            return mismatch("Content-Digest", f"Content-Digest does not parse: {exc}",
                            expected, content_digest)
        if "sha-256" not in digests:
            return mismatch("Content-Digest",
                            "Content-Digest has no sha-256 member (sha-256=:<base64>:)",
                            expected, content_digest)
        checks = [("sha-256", sha256_bytes)]
        if "sha-512" in digests:
            checks.append(("sha-512", sha512.digest()))
        for name, actual in checks:
            if len(digests[name]) != len(actual):
                return mismatch("Content-Digest",
                                f"Content-Digest {name} decodes to {len(digests[name])} bytes,"
                                f" not {len(actual)}", expected, content_digest)
            if digests[name] != actual:
                return mismatch("Content-Digest",
                                f"Content-Digest {name} does not match the body as received",
                                expected, content_digest)
    if gzip_error is not None:
        return error(400, "bad_gzip", f"The body does not inflate as gzip: {gzip_error}")

    parsed = None
    if not json_overflow and json_buffer:
        try:
            parsed = json.loads(bytes(json_buffer))
        except ValueError:
            parsed = None
    return json_response({
        "size": size,
        "sha256": sha256_bytes.hex(),
        "md5_base64": md5_base64,
        "content_type": request.headers.get("Content-Type"),
        "content_length": request.content_length,
        "transfer_encoding": request.headers.get("Transfer-Encoding"),
        "content_encoding": content_encoding,
        "inflated_size": inflated_size if gzipped else None,
        "inflated_sha256": inflated_sha256.hexdigest() if gzipped else None,
        "json": parsed,
        "content_md5_checked": content_md5 is not None,
        "content_digest_checked": content_digest is not None,
    })


# --- deterministic files with ranges and cut connections -----------------------------------
#
# GET|HEAD /files/<name>?size=&version=&...
#   A file of `size` bytes (default 1 MiB = 1048576, 0..2 GiB = 2147483648, else
#   422) whose content depends only on (name, version): a 64 KiB block
#   B = SHAKE-256("networking-test-file\0<name>\0<version>") (65536 bytes), and
#   the 64 KiB block number i of the file is B with its first 8 bytes XORed with
#   i as a big-endian uint64 (so bytes shifted by whole blocks differ).
#   version: integer >= 0, default 1.
#   Headers: Content-Type application/octet-stream, Content-Length,
#   Accept-Ranges: bytes, ETag "<32 hex>" (strong; from name, size and version),
#   Last-Modified 2024-01-01T00:00:00Z + version hours.
#   Range (GET only, one range, unit bytes): bytes=a-b, a-, -n -> 206 with
#   Content-Range: bytes a-b/size (b clamped to size-1); a >= size or -0 ->
#   416 range_not_satisfiable with Content-Range: bytes */size. Several ranges,
#   another unit or a malformed value: ignored (200 full).
#   If-Range (with Range): an ETag (strong comparison; W/ never matches) or an
#   HTTP date (must equal Last-Modified exactly); no match -> 200 full body.
#   Options:
#     ignore_range=1  Range is ignored: always 200 full, Accept-Ranges: none
#     range_limit=K   a 206 carries at most K bytes (its Content-Range says
#                     which), as servers that cap a range's size do
#     no_validators=1 no ETag or Last-Modified (so If-Range never matches)
#     overlong=K      a 206 sends K bytes more than its Content-Range names, chunked
#                     (no Content-Length), as a broken server or cache might
#     cut_after=M     send M body bytes of this response (200 or 206) with the
#                     full Content-Length announced, then close the connection
#                     (the socket is shut down and gunicorn drops it); M >= the
#                     body length: no cut
#     cut_once=KEY    cut only the first GET carrying KEY (at cut_after, or at
#                     half the body without cut_after); later GETs with KEY are
#                     served whole. Keys are forgotten by POST /test/reset.
#     after_cut=changed|ignore_range
#                     with cut_once, for the GETs after the cut one (the same URL):
#                     changed serves version + 1 (new content and validators, so
#                     If-Range no longer matches); ignore_range ignores Range as
#                     ignore_range=1 does.
# GET /files/<name>/sha256?size=&version=
#   200 {"name", "size", "version", "sha256": <hex SHA-256 of the whole file>}.

FILE_BLOCK = 64 * 1024
FILE_DEFAULT_SIZE = 1024 * 1024
FILE_MAX_SIZE = 2 * 1024 ** 3
VERSION_EPOCH = 1704067200  # 2024-01-01T00:00:00Z; version N was last modified N hours later


def version_last_modified(version):
    return VERSION_EPOCH + version * 3600


def http_date(timestamp):
    return email.utils.formatdate(timestamp, usegmt=True)


def parse_http_date(value):
    """Unix seconds of an HTTP date, or None."""
    try:
        parsed = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp())


@functools.lru_cache(maxsize=32)
def file_base_block(name, version):
    return hashlib.shake_256(f"networking-test-file\0{name}\0{version}".encode()).digest(FILE_BLOCK)


def file_chunks(name, version, start, stop):
    """The bytes [start, stop) of the file, in chunks of at most 64 KiB."""
    base = file_base_block(name, version)
    head = int.from_bytes(base[:8], "big")
    rest = base[8:]
    pos = start
    while pos < stop:
        index, offset = divmod(pos, FILE_BLOCK)
        count = min(FILE_BLOCK - offset, stop - pos)
        block = (head ^ index).to_bytes(8, "big") + rest
        yield block[offset:offset + count] if count < FILE_BLOCK else block
        pos += count


@functools.lru_cache(maxsize=64)
def file_sha256(name, size, version):
    digest = hashlib.sha256()
    for chunk in file_chunks(name, version, 0, size):
        digest.update(chunk)
    return digest.hexdigest()


def file_etag(name, size, version):
    return '"' + hashlib.sha256(f"{name}\0{size}\0{version}".encode()).hexdigest()[:32] + '"'


def file_params():
    """(size, version, None) or (None, None, 422 response)."""
    fields = {}
    size = request.args.get("size", str(FILE_DEFAULT_SIZE))
    version = request.args.get("version", "1")
    if not re.fullmatch(r"[0-9]+", size) or int(size) > FILE_MAX_SIZE:
        fields["size"] = [f"must be an integer between 0 and {FILE_MAX_SIZE}"]
    if not re.fullmatch(r"[0-9]{1,9}", version):
        fields["version"] = ["must be an integer between 0 and 999999999"]
    if fields:
        return None, None, validation_error(fields)
    return int(size), int(version), None


def parse_byte_range(value, size):
    """(start, stop) for one satisfiable range, "unsatisfiable", or None when
    the Range header is to be ignored (absent, malformed, several ranges)."""
    if value is None:
        return None
    unit, eq, spec = value.partition("=")
    if not eq or unit.strip().lower() != "bytes":
        return None
    match = re.fullmatch(r"\s*([0-9]*)\s*-\s*([0-9]*)\s*", spec)
    if match is None:
        return None  # several ranges or garbage
    first, last = match.groups()
    if first == "":
        if last == "":
            return None
        suffix = int(last)
        if suffix == 0 or size == 0:
            return "unsatisfiable"
        return max(size - suffix, 0), size
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None
    if start >= size:
        return "unsatisfiable"
    return start, min(end, size - 1) + 1


def if_range_matches(value, etag, last_modified):
    value = value.strip()
    if value.startswith("W/"):
        return False
    if value.startswith('"'):
        return etag is not None and value == etag
    return last_modified is not None and parse_http_date(value) == last_modified


def cut_connection(sock):
    """Ends the response mid-body: shuts the socket down, then raises EPIPE, which
    makes gunicorn close the connection without logging a traceback."""
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    raise BrokenPipeError(32, "connection dropped on purpose")


def file_body(name, version, start, stop, cut, sock):
    if cut is None:
        yield from file_chunks(name, version, start, stop)
        return
    yield b""  # makes gunicorn send the head even when cut is 0
    yield from file_chunks(name, version, start, start + cut)
    cut_connection(sock)


@api.get("/files/<name>")
def files(name):
    size, version, failure = file_params()
    if failure:
        return failure
    cut = None
    if "cut_after" in request.args:
        cut = query_int("cut_after", -1)
        if cut < 0:
            return validation_error({"cut_after": ["must be an integer >= 0"]})
    ignore_range = request.args.get("ignore_range") == "1"
    once = request.args.get("cut_once")
    if once is not None and request.method == "GET":
        with state.lock:
            was_cut = once in state.cut_once_keys
        after_cut = request.args.get("after_cut")
        if was_cut and after_cut == "changed":
            version += 1
        elif was_cut and after_cut == "ignore_range":
            ignore_range = True
    validators = request.args.get("no_validators") != "1"
    etag = file_etag(name, size, version) if validators else None
    last_modified = version_last_modified(version) if validators else None
    headers = {"Content-Type": "application/octet-stream",
               "Accept-Ranges": "none" if ignore_range else "bytes"}
    if validators:
        headers["ETag"] = etag
        headers["Last-Modified"] = http_date(last_modified)

    start, stop, status_code = 0, size, 200
    byte_range = None
    if not ignore_range and request.method == "GET":
        byte_range = parse_byte_range(request.headers.get("Range"), size)
        if_range = request.headers.get("If-Range")
        if byte_range is not None and if_range is not None and not if_range_matches(
                if_range, etag, last_modified):
            byte_range = None
    if byte_range == "unsatisfiable":
        resp = error(416, "range_not_satisfiable",
                     f"The range is outside the {size} bytes of the file")
        resp.headers.update(headers)
        resp.headers["Content-Type"] = "application/json"
        resp.headers["Content-Range"] = f"bytes */{size}"
        return resp
    if byte_range is not None:
        start, stop = byte_range
        limit = query_int("range_limit", 0)
        if limit > 0:
            stop = min(stop, start + limit)
        status_code = 206
        headers["Content-Range"] = f"bytes {start}-{stop - 1}/{size}"

    if once is not None and request.method == "GET":
        with state.lock:
            first_time = once not in state.cut_once_keys
            state.cut_once_keys.add(once)
        if not first_time:
            cut = None
        elif cut is None:
            cut = (stop - start) // 2
    if cut is not None and cut >= stop - start:
        cut = None
    sock = request.environ.get("gunicorn.socket")
    overlong = query_int("overlong", 0)
    if status_code == 206 and overlong > 0:
        return Response(file_chunks(name, version, start, stop + overlong), status=206,
                        headers=headers)
    headers["Content-Length"] = str(stop - start)
    return Response(file_body(name, version, start, stop, cut, sock), status=status_code,
                    headers=headers)


@api.get("/files/<name>/sha256")
def file_digest(name):
    size, version, failure = file_params()
    if failure:
        return failure
    return json_response({"name": name, "size": size, "version": version,
                          "sha256": file_sha256(name, size, version)})


# --- HTTP caching fixtures ----------------------------------------------------------------
#
# GET|HEAD /cache/resource/<key>?...
#   200 {"key", "version", "served_at" (Unix seconds, float with microseconds),
#        "user" (id of the user of a valid bearer token, else null; never 401)}
#   plus "varied" (the value of the request header named by `vary`, or null) when vary is given.
#   Response headers from the query (none of them by default):
#     max_age=N          Cache-Control: max-age=N       (N integer >= 0)
#     no_store=1 no_cache=1 private=1 public=1 must_revalidate=1
#                        the matching Cache-Control directives, joined by ", "
#                        in the order max-age, no-store, no-cache, private,
#                        public, must-revalidate
#     expires=N          Expires: now + N seconds (HTTP date; N may be negative)
#     age=N              Age: N                          (N integer >= 0)
#     vary=<header>      Vary: <header>, and that request header echoed as "varied"
#     etag=1 | etag=weak ETag "<key>-v<version>-<8 hex>" (strong) or W/"..." (weak)
#     last_modified=1    Last-Modified 2024-01-01T00:00:00Z + version hours
#   Conditionals: with etag=1|weak, If-None-Match (a list or *, weak comparison)
#   matching the ETag -> 304; else, only when If-None-Match is absent, with
#   last_modified=1, If-Modified-Since >= Last-Modified -> 304. A 304 has no
#   body and carries Cache-Control, Expires, Age, Vary and ETag as the 200
#   would (werkzeug drops Last-Modified from a 304).
#   Per key, counts: requests (every GET/HEAD answered 200 or 304; a 422 for a
#   bad query value is not counted), conditional (requests with
#   If-None-Match or If-Modified-Since), not_modified (304s sent).
# POST /cache/resource/<key>/touch  bumps the version (new body, ETag and
#   Last-Modified): 200 {"key", "version"}
# GET /cache/hits/<key>  200 {"requests", "conditional", "not_modified"} (zeros if unknown)
# Versions (start at 1) and counts are forgotten by POST /test/reset.

CACHE_FLAGS = (("no_store", "no-store"), ("no_cache", "no-cache"), ("private", "private"),
               ("public", "public"), ("must_revalidate", "must-revalidate"))


def cache_etag(key, version, weak):
    tag = hashlib.sha256(f"{key}\0{version}".encode()).hexdigest()[:8]
    safe_key = re.sub(r'[^\x21\x23-\x7e]', "_", key)[:40]  # etagc: no '"', no spaces
    return ("W/" if weak else "") + f'"{safe_key}-v{version}-{tag}"'


def etag_list_matches(header, etag):
    """If-None-Match evaluation (weak comparison)."""
    if header.strip() == "*":
        return True
    opaque = etag[2:] if etag.startswith("W/") else etag
    for candidate in re.findall(r'(?:W/)?"[^"]*"', header):
        if (candidate[2:] if candidate.startswith("W/") else candidate) == opaque:
            return True
    return False


def new_cache_hits():
    return {"requests": 0, "conditional": 0, "not_modified": 0}


@api.get("/cache/resource/<key>")
def cache_resource(key):
    args = request.args
    fields = {}
    numbers = {}
    for name, minimum in (("max_age", 0), ("age", 0), ("expires", None)):
        if name in args:
            value = args[name].strip()
            if not re.fullmatch(r"-?[0-9]+", value) or (minimum is not None and int(value) < minimum):
                fields[name] = ["must be an integer" + (" >= 0" if minimum is not None else "")]
            else:
                numbers[name] = int(value)
    if fields:
        return validation_error(fields)
    conditional = "If-None-Match" in request.headers or "If-Modified-Since" in request.headers
    with state.lock:
        version = state.cache_versions.get(key, 1)
        hits = state.cache_hits.setdefault(key, new_cache_hits())
        hits["requests"] += 1
        if conditional:
            hits["conditional"] += 1

    headers = {}
    directives = []
    if "max_age" in numbers:
        directives.append(f"max-age={numbers['max_age']}")
    directives += [directive for flag, directive in CACHE_FLAGS if args.get(flag) == "1"]
    if directives:
        headers["Cache-Control"] = ", ".join(directives)
    if "expires" in numbers:
        headers["Expires"] = http_date(time.time() + numbers["expires"])
    if "age" in numbers:
        headers["Age"] = str(numbers["age"])
    vary = args.get("vary")
    if vary:
        headers["Vary"] = vary
    etag = None
    if args.get("etag") in ("1", "weak"):
        etag = cache_etag(key, version, args["etag"] == "weak")
        headers["ETag"] = etag
    last_modified = None
    if args.get("last_modified") == "1":
        last_modified = version_last_modified(version)
        headers["Last-Modified"] = http_date(last_modified)

    if_none_match = request.headers.get("If-None-Match")
    if_modified_since = request.headers.get("If-Modified-Since")
    not_modified = False
    if if_none_match is not None:
        not_modified = etag is not None and etag_list_matches(if_none_match, etag)
    elif if_modified_since is not None and last_modified is not None:
        since = parse_http_date(if_modified_since)
        not_modified = since is not None and last_modified <= since
    if not_modified:
        with state.lock:
            state.cache_hits.setdefault(key, new_cache_hits())["not_modified"] += 1
        resp = no_body(304)
        resp.headers.update(headers)
        return resp

    payload = {"key": key, "version": version, "served_at": round(time.time(), 6),
               "user": token_user_id()}
    if vary:
        payload["varied"] = request.headers.get(vary)
    return json_response(payload, headers=headers)


@api.post("/cache/resource/<key>/touch")
def cache_touch(key):
    with state.lock:
        version = state.cache_versions.get(key, 1) + 1
        state.cache_versions[key] = version
    return json_response({"key": key, "version": version})


@api.get("/cache/hits/<key>")
def cache_hits(key):
    with state.lock:
        hits = dict(state.cache_hits.get(key, new_cache_hits()))
    return json_response(hits)


# --- API descriptions: OpenAPI 3.0 and Swagger 2.0 ------------------------------------------
#
# GET /openapi.json  OpenAPI 3.0.3, servers [{"url": "/api/v1"}], security scheme
#                    "bearer" (type http, scheme bearer).
# GET /swagger.json  Swagger 2.0 of the same operations, basePath "/api/v1",
#                    security definition "bearer" (apiKey in the Authorization
#                    header: send "Bearer <token>"; a bare token works too).
# Both describe this subset (operationId in parentheses):
#   GET /health (getHealth), POST /auth/login (login), GET /users/me (getCurrentUser),
#   GET /books (listBooks: page, per_page), POST /books (createBook),
#   GET /books/{id} (getBook), PUT /books/{id} (replaceBook), PATCH /books/{id} (updateBook),
#   DELETE /books/{id} (deleteBook), GET /echo/{rest} (echo),
#   POST /echo/{rest} (no operationId: clients name it "POST /echo/{rest}").
# Operations on books and users/me carry security [{"bearer": []}]; the others none.
# Both are built from API_OPERATIONS and API_SCHEMAS below, so they stay in step.

def _ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(properties, required=None, **extra):
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema.update(extra)
    return schema


_STR, _INT, _NUM = {"type": "string"}, {"type": "integer", "format": "int64"}, {"type": "number"}

API_SCHEMAS = {
    "Error": _obj({"code": _STR, "message": _STR}, ["code", "message"]),
    "ValidationError": _obj(
        {"code": _STR, "message": _STR,
         "fields": {"type": "object", "additionalProperties": {"type": "array", "items": _STR}}},
        ["code", "message", "fields"]),
    "Health": _obj({"status": _STR}, ["status"]),
    "User": _obj({"id": _INT, "name": _STR, "email": _STR,
                  "created_at": {"type": "string", "format": "date-time"}},
                 ["id", "name", "email", "created_at"]),
    "LoginRequest": _obj(
        {"email": _STR, "password": _STR,
         "ttl": {"type": "number", "description": "access token lifetime in seconds",
                 "default": 3600}},
        ["email", "password"]),
    "Session": _obj({"user": _ref("User"), "token": _STR, "refresh_token": _STR,
                     "expires_in": _NUM},
                    ["user", "token", "refresh_token", "expires_in"]),
    "Book": _obj(
        {"id": _INT, "title": _STR, "author": _STR,
         "genre": {"type": "string", "enum": GENRES},
         "year": {"type": "integer", "minimum": 0, "maximum": 2100},
         "image_url": {"type": "string", "nullable": True}},
        ["id", "title", "author", "genre", "year", "image_url"]),
    "BookInput": _obj(
        {"title": _STR, "author": _STR, "genre": {"type": "string", "enum": GENRES},
         "year": {"type": "integer", "minimum": 0, "maximum": 2100},
         "image_url": {"type": "string", "nullable": True}},
        ["title", "author", "genre", "year"]),
    "BookPatch": _obj(
        {"title": _STR, "author": _STR, "genre": {"type": "string", "enum": GENRES},
         "year": {"type": "integer", "minimum": 0, "maximum": 2100},
         "image_url": {"type": "string", "nullable": True}}),
    "BookPage": _obj(
        {"data": {"type": "array", "items": _ref("Book")},
         "page": _obj({"current": _INT, "per_page": _INT, "total_pages": _INT,
                       "total_count": _INT},
                      ["current", "per_page", "total_pages", "total_count"])},
        ["data", "page"]),
    "Echo": _obj(
        {"method": _STR, "path": {"type": "string", "description": "as sent, still percent-encoded"},
         "query": _STR,
         "args": {"type": "object", "additionalProperties": {"type": "array", "items": _STR}},
         "headers": {"type": "object", "additionalProperties": _STR},
         "json": {"nullable": True, "description": "the body parsed as JSON, or null"},
         "data": _STR},
        ["method", "path", "query", "args", "headers", "json", "data"]),
}

_ID = {"name": "id", "in": "path", "required": True, "schema": _INT}
_REST = {"name": "rest", "in": "path", "required": True, "schema": _STR,
         "description": "any text; echoed back in path"}
_E401 = ("Missing, invalid or expired token", "Error")
_E404 = ("No book with this id", "Error")
_E422 = ("Validation failed", "ValidationError")

# (method, path, operationId or None, summary, needs bearer, parameters,
#  (body schema, required) or None, {status: (description, schema or None)})
API_OPERATIONS = [
    ("get", "/health", "getHealth", "Health check", False, [], None,
     {"200": ("OK", "Health")}),
    ("post", "/auth/login", "login", "Log in with email and password", False, [],
     ("LoginRequest", True),
     {"200": ("Logged in", "Session"), "401": ("Wrong email or password", "Error"),
      "422": _E422}),
    ("get", "/users/me", "getCurrentUser", "The authenticated user", True, [], None,
     {"200": ("The user", "User"), "401": _E401}),
    ("get", "/books", "listBooks", "List books, paginated", True,
     [{"name": "page", "in": "query", "required": False,
       "schema": {"type": "integer", "minimum": 1, "default": 1}},
      {"name": "per_page", "in": "query", "required": False,
       "description": "values above 100 are treated as 100",
       "schema": {"type": "integer", "minimum": 1, "default": 10}}],
     None,
     {"200": ("A page of books", "BookPage"), "401": _E401, "422": _E422}),
    ("post", "/books", "createBook", "Create a book", True, [], ("BookInput", True),
     {"201": ("Created", "Book"), "401": _E401, "422": _E422}),
    ("get", "/books/{id}", "getBook", "Get a book", True, [_ID], None,
     {"200": ("The book", "Book"), "401": _E401, "404": _E404}),
    ("put", "/books/{id}", "replaceBook", "Replace a book (image_url reset when absent)", True,
     [_ID], ("BookInput", True),
     {"200": ("The updated book", "Book"), "401": _E401, "404": _E404, "422": _E422}),
    ("patch", "/books/{id}", "updateBook", "Change some fields of a book", True, [_ID],
     ("BookPatch", True),
     {"200": ("The updated book", "Book"), "401": _E401, "404": _E404, "422": _E422}),
    ("delete", "/books/{id}", "deleteBook", "Delete a book", True, [_ID], None,
     {"204": ("Deleted", None), "401": _E401, "404": _E404}),
    ("get", "/echo/{rest}", "echo", "Echo the request", False, [_REST], None,
     {"200": ("What the server received", "Echo")}),
    ("post", "/echo/{rest}", None, "Echo the request and its JSON body", False, [_REST],
     ("any", False),
     {"200": ("What the server received", "Echo")}),
]


def openapi_document():
    paths = {}
    for method, path, op_id, summary, secured, params, body, responses in API_OPERATIONS:
        op = {"summary": summary}
        if op_id:
            op["operationId"] = op_id
        if params:
            op["parameters"] = params
        if body:
            schema = {} if body[0] == "any" else _ref(body[0])
            op["requestBody"] = {"required": body[1],
                                 "content": {"application/json": {"schema": schema}}}
        op["responses"] = {
            code: ({"description": text} if schema is None else
                   {"description": text,
                    "content": {"application/json": {"schema": _ref(schema)}}})
            for code, (text, schema) in responses.items()
        }
        if secured:
            op["security"] = [{"bearer": []}]
        paths.setdefault(path, {})[method] = op
    return {
        "openapi": "3.0.3",
        "info": {"title": "Networking test API", "version": "1.0.0",
                 "description": "A subset of the local test API (script/testapi/app.py)."},
        "servers": [{"url": PREFIX}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": API_SCHEMAS,
        },
    }


def _swagger_schema(schema):
    """An OpenAPI 3.0 schema rewritten for Swagger 2.0 (refs, nullable)."""
    if isinstance(schema, list):
        return [_swagger_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "$ref":
            out[key] = value.replace("#/components/schemas/", "#/definitions/")
        elif key == "nullable":
            out["x-nullable"] = value
        else:
            out[key] = _swagger_schema(value)
    return out


def swagger_document():
    paths = {}
    for method, path, op_id, summary, secured, params, body, responses in API_OPERATIONS:
        op = {"summary": summary}
        if op_id:
            op["operationId"] = op_id
        parameters = []
        for p in params:
            q = {k: v for k, v in p.items() if k != "schema"}
            q.update(_swagger_schema(p["schema"]))
            parameters.append(q)
        if body:
            schema = {"type": "object"} if body[0] == "any" else _swagger_schema(_ref(body[0]))
            parameters.append({"name": "body", "in": "body", "required": body[1],
                               "schema": schema})
        if parameters:
            op["parameters"] = parameters
        op["responses"] = {
            code: ({"description": text} if schema is None else
                   {"description": text, "schema": _swagger_schema(_ref(schema))})
            for code, (text, schema) in responses.items()
        }
        if secured:
            op["security"] = [{"bearer": []}]
        paths.setdefault(path, {})[method] = op
    return {
        "swagger": "2.0",
        "info": {"title": "Networking test API", "version": "1.0.0",
                 "description": "A subset of the local test API (script/testapi/app.py)."},
        "basePath": PREFIX,
        "consumes": ["application/json"],
        "produces": ["application/json"],
        "securityDefinitions": {
            "bearer": {"type": "apiKey", "in": "header", "name": "Authorization",
                       "description": 'send "Bearer <token>"'},
        },
        "paths": paths,
        "definitions": _swagger_schema(API_SCHEMAS),
    }


@api.get("/openapi.json")
def openapi_json():
    return json_response(openapi_document())


@api.get("/swagger.json")
def swagger_json():
    return json_response(swagger_document())


# --- test controls ----------------------------------------------------------

@api.post("/test/tokens/expire")
def expire_token():
    token = body_object().get("token")
    token = raw_token(token) if isinstance(token, str) else ""
    with state.lock:
        entry = state.access_tokens.get(token)
        if entry is None:
            return error(404, "not_found", "Token not found")
        entry["expired"] = True
    return no_body(204)


@api.get("/test/counters")
def counters():
    with state.lock:
        return json_response(dict(state.counters))


@api.post("/test/reset")
def reset():
    with state.lock:
        state.reset_test_state()
    return no_body(204)


@api.get("/health")
def health():
    return json_response({"status": "ok"})


app.register_blueprint(api)


# --- request bodies a route did not read ---------------------------------------------------

DRAIN_LIMIT = 4 * 1024 ** 3


@app.after_request
def drain_request_body(resp):
    """Reads (and drops) whatever the route left unread of the request body.

    So an answer given without reading the body (an error, an idempotent
    replay) reaches a client that is still sending a large body: gunicorn
    itself drains only 64 KiB, then closes the connection, and the client
    may see a reset instead of the answer. Bodies beyond 4 GiB are left to
    gunicorn."""
    try:
        stream = request.stream
        drained = 0
        while drained < DRAIN_LIMIT:
            chunk = stream.read(1024 * 1024)
            if not chunk:
                break
            drained += len(chunk)
    except Exception:  # the client left, or the body was already consumed
        pass
    return resp


# --- errors: always JSON, never HTML ----------------------------------------------

@app.errorhandler(HTTPException)
def http_error(exc):
    if exc.code == 404:
        resp = error(404, "not_found", f"No route for {request.method} {request.path}")
    elif exc.code == 405:
        resp = error(405, "method_not_allowed", f"Method {request.method} not allowed")
    else:
        resp = error(exc.code or 500, f"status_{exc.code}", exc.description or exc.name)
    # Keep headers such as Allow (405) from the original exception.
    for name, value in exc.get_response().headers.items():
        if name.lower() not in ("content-type", "content-length"):
            resp.headers[name] = value
    return resp


@app.errorhandler(Exception)
def internal_error(exc):
    app.logger.exception("unhandled error")
    return error(500, "internal_error", "Internal server error")
