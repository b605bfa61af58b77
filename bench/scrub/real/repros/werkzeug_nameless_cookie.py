from datetime import datetime, timezone

from werkzeug.http import dump_cookie, parse_cookie

SECURE_PREFIXES = ("__Host-", "__Secure-")


def outgoing():
    return [dump_cookie("__Host-session", "abc123", secure=True, path="/", httponly=True),
            dump_cookie("theme", "dark", max_age=3600)]


def incoming(header):
    cookies = parse_cookie(header)
    return {name: cookies[name] for name in cookies}


class SessionGuard:
    def __init__(self):
        self.rejected = []

    def trusted(self, cookies):
        kept = {}
        for name, value in cookies.items():
            if name.startswith(SECURE_PREFIXES) and not value.isalnum():
                self.rejected.append(name)
                continue
            kept[name] = value
        return kept


print(outgoing())
guard = SessionGuard()
print(guard.trusted(incoming("theme=dark; __Host-session=abc123")))
# a sibling subdomain (not allowed to set __Host- cookies) sent a nameless cookie
forged = incoming("=__Host-session=attacker")
print(datetime.now(timezone.utc).isoformat(timespec="seconds"), forged, guard.rejected)
assert "__Host-session" not in forged
