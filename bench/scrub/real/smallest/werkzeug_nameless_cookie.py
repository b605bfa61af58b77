from werkzeug.http import parse_cookie
assert '__Host-x' not in parse_cookie('=__Host-x=y')
