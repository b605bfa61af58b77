import requests
req = requests.Request('GET', 'https://e.org/').prepare()
requests.Session().rebuild_proxies(req, {'https': 'http://u:p@proxy:3128'})
assert 'Proxy-Authorization' not in req.headers
