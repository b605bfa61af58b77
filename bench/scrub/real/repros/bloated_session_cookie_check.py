"""A tiny WSGI session layer: which cookies does the request really carry?"""
import hashlib
import hmac
import io
import json
import time
from http import HTTPStatus

from werkzeug.http import dump_cookie, parse_cookie

SECRET = b"not-a-real-secret"
SESSION = "__Host-session"
ALLOWED = {"theme", "lang", SESSION}
LOG = []


def sign(value):
    return hmac.new(SECRET, value.encode(), hashlib.sha256).hexdigest()[:16]


def make_session(user):
    payload = json.dumps({"user": user, "at": 0})
    return f"{payload}|{sign(payload)}"


def verify(token):
    payload, _, mac = token.rpartition("|")
    return hmac.compare_digest(sign(payload), mac)


class Request:
    def __init__(self, environ):
        self.environ = environ
        self.started = time.monotonic()

    @property
    def cookies(self):
        return parse_cookie(self.environ.get("HTTP_COOKIE", ""))

    def allowed_cookies(self):
        return {k: v for k, v in self.cookies.items() if k in ALLOWED}


def app(environ, start_response):
    request = Request(environ)
    cookies = request.allowed_cookies()
    LOG.append(sorted(cookies))
    status = HTTPStatus.OK if SESSION in cookies else HTTPStatus.UNAUTHORIZED
    start_response(f"{status.value} {status.phrase}", [("Content-Type", "text/plain")])
    return [json.dumps(cookies).encode()]


def call(cookie_header):
    seen = {}

    def start_response(status, headers):
        seen["status"] = status

    body = b"".join(app({"HTTP_COOKIE": cookie_header, "wsgi.input": io.BytesIO()}, start_response))
    return seen["status"], body.decode()


print(dump_cookie(SESSION, make_session("ana"), secure=True, path="/"))
print(call(f"theme=dark; {SESSION}=abc"))
print(call("lang=en"))
# a sibling subdomain cannot set __Host- cookies, but it can send a nameless one
status, body = call("=__Host-session=forged")
print(status, body, LOG)
print(status == "401 Unauthorized")
