import base64
import os

import requests

PROXIES = {
    "http": "http://svc-user:s3cret@proxy.internal:3128",
    "https": "http://svc-user:s3cret@proxy.internal:3128",
}
TARGETS = ["https://api.example.org/v1/items", "http://mirror.example.org/pkg"]


def decode(header):
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return scheme, base64.b64decode(token).decode()


class Client:
    def __init__(self, proxies):
        self.session = requests.Session()
        self.proxies = proxies
        self.audit = []

    def prepared(self, url):
        request = requests.Request("GET", url, headers={"User-Agent": "inventory/2.1"})
        return self.session.prepare_request(request)

    def route(self, url):
        prepared = self.prepared(url)
        self.session.rebuild_proxies(prepared, self.proxies)
        self.audit.append((url, decode(prepared.headers.get("Proxy-Authorization"))))
        return prepared


client = Client(PROXIES)
routed = [client.route(url) for url in TARGETS]
for url, auth in client.audit:
    print(url, auth)
https_request = routed[0]
print(sorted(https_request.headers))
# an HTTPS request goes through the proxy with CONNECT: the credentials must not ride along in the request
assert "Proxy-Authorization" not in https_request.headers
print("env proxy:", os.environ.get("HTTPS_PROXY"))
