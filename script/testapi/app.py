"""Test API used by the Swift integration tests and the Demo.

A small Flask app; every route lives under /api/v1. All state is kept in
memory (guarded by one lock), so it must run in a single process
(gunicorn --workers 1 with threads). Started by script/server.

Defaults worth knowing: login/signup/refresh ttl 3600 s; /books page 1,
per_page 10 (clamped to 100); /poll ready_after 0; /slow seconds 1 (max 30);
/flaky failures 1, status 503; /errors/api-code status 400, code api_error.
Errors are always JSON {"code", "message"}; validation failures are 422
{"code":"validation_failed","message":"Validation failed","fields":{...}}.
"""

import email.utils
import functools
import gzip
import json
import math
import secrets
import socket
import threading
import time
import zlib
from datetime import datetime, timezone

from flask import Blueprint, Flask, Response, request
from werkzeug.exceptions import HTTPException

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
        # Raising EPIPE makes gunicorn close the socket without logging a
        # traceback.
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        raise BrokenPipeError(32, "connection dropped on purpose")

    return Response(body(), mimetype="application/octet-stream",
                    headers={"Content-Length": "100000"})


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
